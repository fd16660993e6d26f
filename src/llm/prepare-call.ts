import type { LlmAdapter } from '../../providers/types.ts';
import type { CanonicalMessage } from '../../translators/canonical/index.ts';
import { mintId } from '../../translators/common/ids.ts';
import { isRecord } from '../../translators/common/validation.ts';
import type { UncountedInput } from '../../translators/passthrough/index.ts';
import type { AppContext } from '../app/context.ts';
import type { AuthContext } from '../auth/key-cache.ts';
import type { CatalogEntry } from '../catalog/catalog.ts';
import type { LlmKeyGate } from '../keys/llm-key-gate.ts';
import { LlmCallWatch } from '../observability/llm-call-observer.ts';
import { RoutingHeaderError } from '../routing/routing-headers.ts';
import { FallbackNotAllowed, type Router } from '../routing/router.ts';
import { modelNotAllowedMessage } from '../keys/key-policy.ts';
import type { Deployment } from '../routing/routing-table.ts';
import type { ClientFormat, DecodedClientRequest, EncodeContext } from './client-format.ts';
import { type Call, once, serve, watchLabels } from './llm-call.ts';
import { LlmError } from './llm-error.ts';
import { loadConversation, type StoredConversation } from './llm-responses.repository.ts';
import { refusedInFormat } from './refused-in-format.ts';

/** What preparing a call reads: the catalog, stored conversations, the adapters, routing, the key's allow-list. */
export interface PrepareDeps {
  ctx: Pick<AppContext, 'catalog' | 'db'>;
  adapters: ReadonlyMap<string, LlmAdapter>;
  router: Router;
  keyGate?: LlmKeyGate;
}

/**
 * Everything a call is checked against before it holds any money: decoded (through the
 * passthrough's view when its body goes to an upstream of its own format), its model known and
 * an LLM, allowed to the key, its deployment plan, the Responses conversation it continues, and
 * the client's own body rebuilt for a passthrough. Throws the refusal in the client's format.
 */
export async function prepareCall(
  deps: PrepareDeps,
  format: ClientFormat,
  body: unknown,
  auth: AuthContext,
  request: Request,
): Promise<Call> {
  const passesThrough = passesThroughBody(deps, format, body);
  const view = passesThrough ? format.passthrough?.view : undefined;
  let decoded: DecodedClientRequest = refusedInFormat(format, () =>
    format.decode(view && isRecord(body) ? view(body) : body),
  );
  const entry = llmEntry(deps, format, decoded.request.model);
  deps.keyGate?.checkModel(format.family, auth, entry.object.id);
  let plan: Deployment[];
  try {
    // The key's list is applied within the plan: a fallback it may not use is never chosen, not
    // even as the one deployment tried while all cool down.
    plan = deps.router.plan(entry, request.headers.get('x-gateway-fallbacks'), deps.keyGate?.modelFilter(auth));
  } catch (err) {
    if (err instanceof RoutingHeaderError) throw new LlmError(format.family, 'invalid_request', err.message);
    if (err instanceof FallbackNotAllowed)
      throw new LlmError(
        format.family,
        'permission_denied',
        `x-gateway-fallbacks: ${modelNotAllowedMessage(err.modelId)}`,
        'x-gateway-fallbacks',
        'model_not_allowed',
      );
    throw err;
  }
  // A deployment of another format gets the whole body translated, never only what the
  // passthrough reads of it (documents and server tools would go missing without a warning):
  // decoded when such a deployment is first tried, so a call its own format serves pays nothing.
  const mixed =
    passesThrough && format.passthrough && !plan.every((d) => speaks(deps, d.provider.id, format.passthrough?.format));
  const first = plan[0];
  if (!first || !deps.adapters.has(first.provider.id))
    throw new LlmError(format.family, 'invalid_request', `The model '${entry.object.id}' has no LLM adapter`, 'model');
  const stored = await storedHistory(deps, format, decoded, auth);
  const history = stored?.messages ?? [];
  if (stored) decoded = continuing(decoded, history);
  const translation = mixed
    ? once(() => {
        const whole = format.decode(body);
        return stored ? continuing(whole, history) : whole;
      })
    : undefined;
  let wire: Call['wire'];
  let uncounted: UncountedInput | undefined;
  const passthrough = format.passthrough;
  if (passesThrough && passthrough?.request) {
    // Nothing is dropped on the way: the translator's warnings about what the canonical request
    // leaves out do not apply; only the passthrough's own do.
    const build = passthrough.request;
    const built = refusedInFormat(format, () => build(body, history, stored?.wireItems));
    wire = { format: passthrough.format, body: built.value };
    uncounted = built.uncounted;
    decoded = { ...decoded, warnings: built.warnings };
  }
  const served = serve(deps.adapters, first);
  const encode: EncodeContext = {
    id: mintId(format.idPrefix),
    model: served.model.id,
    created: Math.floor(Date.now() / 1000),
    decoded,
  };
  return {
    format,
    decoded,
    requested: entry,
    plan,
    served,
    attempts: 0,
    auth,
    body,
    encode,
    startedAt: new Date(),
    history,
    wire,
    translation,
    uncounted,
    requestHeaders: request.headers,
    watch: new LlmCallWatch(request, {
      ...watchLabels(served),
      clientFormat: format.name,
      stream: decoded.request.stream === true,
    }),
  };
}

/**
 * Whether this body goes straight to an upstream of its own format: then the gateway decodes
 * only what it reads of it (`Passthrough.view`), and the upstream judges the rest.
 */
function passesThroughBody(deps: PrepareDeps, format: ClientFormat, body: unknown): body is Record<string, unknown> {
  const passthrough = format.passthrough;
  if (!passthrough?.request || !isRecord(body) || typeof body.model !== 'string') return false;
  const entry = deps.ctx.catalog.get(body.model);
  return !!entry && speaks(deps, entry.provider.id, passthrough.format);
}

/** Whether the provider's upstream takes a client body of `format` as it is. */
function speaks(deps: PrepareDeps, providerId: string, format: string | undefined): boolean {
  return format !== undefined && deps.adapters.get(providerId)?.passthroughFormat === format;
}

/** A request continuing a stored conversation: instructions are not carried over; the new request's system messages lead. */
function continuing(decoded: DecodedClientRequest, history: CanonicalMessage[]): DecodedClientRequest {
  const system = decoded.request.messages.filter((m) => m.role === 'system');
  const rest = decoded.request.messages.filter((m) => m.role !== 'system');
  return { ...decoded, request: { ...decoded.request, messages: [...system, ...history, ...rest] } };
}

/** The catalog's entry for `modelId`, which must exist and be an LLM. */
function llmEntry(deps: PrepareDeps, format: ClientFormat, modelId: string): CatalogEntry {
  const entry = deps.ctx.catalog.get(modelId);
  if (!entry)
    throw new LlmError(format.family, 'not_found', `The model '${modelId}' does not exist`, 'model', 'model_not_found');
  if (entry.object.category !== 'llm')
    throw new LlmError(
      format.family,
      'invalid_request',
      entry.object.category === 'embedding'
        ? `The model '${modelId}' is an embedding model; use POST /v1/embeddings`
        : `The model '${modelId}' is a ${entry.object.category} model; use POST /v1/tasks`,
      'model',
      'model_not_supported',
    );
  return entry;
}

/** The stored conversation a Responses `previous_response_id` continues (undefined when not set). */
async function storedHistory(
  deps: PrepareDeps,
  format: ClientFormat,
  decoded: DecodedClientRequest,
  auth: AuthContext,
): Promise<StoredConversation | undefined> {
  const previous = decoded.responses?.previousResponseId;
  if (!previous) return undefined;
  const stored = await loadConversation(deps.ctx.db, auth.accountId, previous);
  if (!stored)
    throw new LlmError(
      format.family,
      'not_found',
      `Previous response with id '${previous}' not found.`,
      'previous_response_id',
      'previous_response_not_found',
    );
  return stored;
}

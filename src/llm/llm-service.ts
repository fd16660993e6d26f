import {
  InvalidRequestError,
  type CanonicalMessage,
  type CanonicalResponse,
} from '../../translators/canonical/index.ts';
import { mintId } from '../../translators/shared/ids.ts';
import { isRecord } from '../../translators/shared/validation.ts';
import type { LlmAdapter, LlmCall, ModelRef } from '../../providers/types.ts';
import { UpstreamError } from '../../providers/shared/upstream-error.ts';
import type { Router } from '../routing/router.ts';
import { RouteFailure } from '../routing/failover.ts';
import type { Deployment } from '../routing/routing-table.ts';
import { parseCacheHeader, RoutingHeaderError } from '../routing/routing-headers.ts';
import { classifyLlmFailure, routingHeaders } from './llm-routing.ts';
import type { ResponseCache } from './response-cache.ts';
import { cachedResponse, capturedStream, type Capture } from './cached-response.ts';
import { awaitFirstEvent } from './first-event.ts';
import type { AppContext } from '../app/context.ts';
import type { BalanceReservations } from '../accounts/balance-reservations.ts';
import type { AuthContext } from '../auth/key-cache.ts';
import type { CatalogEntry } from '../catalog/catalog.ts';
import { storableString, toStorable } from '../http/hostile-json.ts';
import { errorFields } from '../ops/logger.ts';
import { jsonAnswer } from './json-answer.ts';
import { FirstTokenTap } from '../observability/first-token-tap.ts';
import { recordFallback } from '../observability/metrics.ts';
import { LlmCallWatch } from '../observability/llm-call-observer.ts';
import type { ClientFormat, DecodedClientRequest, EncodeContext } from './client-format.ts';
import { LlmError, kindForStatus } from './llm-error.ts';
import type { StreamOutcome } from './outcome-tap.ts';
import { llmCost } from './pricing.ts';
import { estimateInputTokens } from './input-estimate.ts';
import { recordableInput } from './record-input.ts';
import { loadConversation, saveResponse } from './llm-responses.repository.ts';
import { clientStream, passthroughRulesFor } from './stream-pipeline.ts';
import type { UncountedInput } from '../../translators/passthrough/index.ts';
import { holdClientConnection } from '../http/client-idle.ts';
import { forwardedHeaders } from './forwarded-headers.ts';
import { JSON_HEADERS, SSE_HEADERS } from '../http/answer-headers.ts';
import type { UsageRecorder } from './usage-recorder.ts';
import { warningHeaders } from './warning-headers.ts';
import { affordableOutputTokens, worstCaseHold } from './worst-case.ts';
import { unpricedTool } from './tool-call-hold.ts';
import { refusedInFormat } from './refused-in-format.ts';
import type { KeyTicket, LlmKeyGate } from '../keys/llm-key-gate.ts';
import { unitsToUsd } from '../accounts/money.ts';
import { serverTimingHeaders } from '../observability/server-timing.ts';

/** A stream whose upstream sends nothing for this long ends with the format's error event. */
const DEFAULT_STREAM_IDLE_MS = 60_000;

/** What the call's metrics and spans name: the deployment serving it. */
function watchLabels(served: Served) {
  return {
    model: served.model.id,
    upstreamModel: served.model.upstreamModel,
    provider: served.deployment.provider.id,
    providerKind: served.deployment.provider.kind,
  };
}

/** The deployment answering a call: its model (id and prices), provider and adapter. */
interface Served {
  deployment: Deployment;
  entry: CatalogEntry;
  adapter: LlmAdapter;
  model: ModelRef;
}

/** The call's charge in USD (docs/keys.md): exact on a JSON answer, the held ceiling on a stream. */
const costHeader = (usd: number): Record<string, string> => ({ 'x-gateway-cost-usd': String(usd) });

interface Call {
  format: ClientFormat;
  decoded: DecodedClientRequest;
  /** The model the client asked for. */
  requested: CatalogEntry;
  /** The deployments it may try (docs/routing.md); `served` is the one trying or answering. */
  plan: Deployment[];
  served: Served;
  attempts: number;
  auth: AuthContext;
  body: unknown;
  encode: EncodeContext;
  startedAt: Date;
  /** Stored conversation this call continues (Responses), without system messages. */
  history: CanonicalMessage[];
  /** The balance hold taken at admission; settled with the call's record (none for a cache hit). */
  reservationId?: string;
  /** The client's own body, for a deployment whose upstream speaks the client's format (passthrough). */
  wire?: LlmCall['wire'];
  /** What `wire` sends beyond the canonical request, held too (src/llm/worst-case.ts). */
  uncounted?: UncountedInput;
  /** The client's request headers, some of which an upstream of its own API takes (`forwardedHeaders`). */
  requestHeaders: Headers;
  /** Metrics and spans of the call (src/observability/); also knows the request id. */
  watch: LlmCallWatch;
  /** What the call took from its API key (budget hold, tpm estimate): src/keys/llm-key-gate.ts. */
  keyTicket?: KeyTicket | null;
  /** The worst case held, in USD: a stream's `x-gateway-cost-usd` (its charge is known only at its end). */
  heldUsd?: number;
  /** Passed through with the upstream's response id: the record keeps that id, the one the client saw. */
  idFromUpstream?: boolean;
}

/**
 * One LLM call on any client format against any upstream: decode, check, call, translate or
 * pass through, then record usage and charge — the records are written off the hot path.
 */
export class LlmService {
  constructor(
    /** What a call reads: the catalog, the stored Responses conversations (db), the log. */
    private readonly ctx: Pick<AppContext, 'catalog' | 'db' | 'log'>,
    private readonly adapters: ReadonlyMap<string, LlmAdapter>,
    private readonly recorder: UsageRecorder,
    private readonly reservations: BalanceReservations,
    private readonly router: Router,
    private readonly cache: ResponseCache,
    /** The API key's limits (docs/keys.md); absent in tests that exercise the balance alone. */
    private readonly keyGate?: LlmKeyGate,
  ) {}

  async handle(format: ClientFormat, body: unknown, auth: AuthContext, request: Request): Promise<Response> {
    const call = await this.prepare(format, body, auth, request);
    const { ttlS: cacheTtlS, key: cacheKey, hit } = await this.lookUp(call, request.headers);
    if (hit) return hit;
    Object.assign(call, await this.reserve(format, call, auth));
    // From here the call waits on its upstream, bounded by the provider's own timeouts: Bun's
    // idle limit would cut a client waiting longer (src/http/client-idle.ts).
    const releaseConnection = holdClientConnection(request);
    const abort = new AbortController();
    const onClientGone = () => abort.abort(new Error('client disconnected'));
    request.signal.addEventListener('abort', onClientGone, { once: true });
    const signal = abort.signal;
    const capture: Capture | undefined =
      cacheTtlS > 0 ? { put: (answer) => this.cache.put(cacheKey, answer, cacheTtlS), completed: false } : undefined;
    const cacheHeaders: Record<string, string> = cacheTtlS > 0 ? { 'x-gateway-cache': 'miss' } : {};
    try {
      if (!call.decoded.request.stream) {
        const { value } = await this.route(call, signal, (args) => call.served.adapter.generate(args));
        const { response, warnings } = value;
        const answer = jsonAnswer(call.format, value, call.encode);
        call.idFromUpstream = answer.idFromUpstream;
        await this.store(call, response, answer.json);
        // Billed before answered: a crash after this line cannot lose the charge.
        const settling = performance.now();
        await this.record(call, 'completed', response);
        const timing = call.watch.answered(performance.now() - settling);
        const cost = response.usage ? llmCost(call.served.entry.config.pricing, response.usage) : 0;
        const headers = {
          ...warningHeaders([...call.decoded.warnings, ...warnings, ...(answer.warnings ?? [])]),
          ...this.servedHeaders(call),
          ...costHeader(cost),
        };
        if (capture) void capture.put({ kind: 'json-text', text: answer.text, headers });
        releaseConnection();
        // Not in `headers`: a cached copy must not replay this call's timing.
        return new Response(answer.text, {
          headers: { ...JSON_HEADERS, ...headers, ...cacheHeaders, ...serverTimingHeaders(timing) },
        });
      }
      // The first event is awaited inside the loop: a stream that fails at once still fails over.
      const { value: upstream } = await this.route(call, signal, async (args) =>
        awaitFirstEvent(await call.served.adapter.stream(args), call.served.model.id, this.idleMs(call)),
      );
      call.idFromUpstream = passthroughRulesFor(format, upstream)?.keepsUpstreamId ?? false;
      /** Passed through: the response object exactly as the client saw it, stored as such. */
      let final: Record<string, unknown> | undefined;
      const tap = new FirstTokenTap(
        call.watch,
        call.served.model.id,
        () => estimateInputTokens(call.decoded.request, call.uncounted),
        (outcome) => {
          if (capture) capture.completed = outcome.status === 'completed';
          releaseConnection();
          return this.settle(call, outcome);
        },
        call.decoded.responses?.store ? (response) => this.store(call, response, final) : undefined,
      );
      const headers = {
        ...SSE_HEADERS,
        ...warningHeaders([...call.decoded.warnings, ...upstream.warnings]),
        ...this.servedHeaders(call),
        ...costHeader(call.heldUsd ?? 0),
      };
      const keepFinal = (response: Record<string, unknown>) => {
        final = response;
      };
      const idleTimeoutMs = this.idleMs(call);
      const timing = call.watch.answered();
      const stream = clientStream({
        upstream,
        format,
        ctx: call.encode,
        tap,
        abort,
        keepFinal,
        idleTimeoutMs,
      });
      return new Response(capture ? capturedStream(stream, capture, headers) : stream, {
        headers: { ...headers, ...cacheHeaders, ...serverTimingHeaders(timing) },
      });
    } catch (err) {
      releaseConnection();
      request.signal.removeEventListener('abort', onClientGone);
      throw this.failure(call, err);
    }
  }

  /**
   * Whether this body goes straight to an upstream of its own format: then the gateway decodes
   * only what it reads of it (`Passthrough.view`), and the upstream judges the rest.
   */
  private passesThrough(format: ClientFormat, body: unknown): body is Record<string, unknown> {
    const passthrough = format.passthrough;
    if (!passthrough?.request || !isRecord(body) || typeof body.model !== 'string') return false;
    const entry = this.ctx.catalog.get(body.model);
    return !!entry && this.adapters.get(entry.provider.id)?.passthroughFormat === passthrough.format;
  }

  /**
   * The exact response cache (docs/routing.md), the first place a call can be served from: before
   * any hold or upstream. A hit is recorded (cost 0) under the model that first served it.
   */
  private async lookUp(call: Call, headers: Headers): Promise<{ ttlS: number; key: string; hit?: Response }> {
    let ttlS: number;
    try {
      ttlS = parseCacheHeader(headers.get('x-gateway-cache'), call.requested.config.cache_ttl_s).ttlS;
    } catch (err) {
      throw err instanceof RoutingHeaderError ? new LlmError(call.format.family, 'invalid_request', err.message) : err;
    }
    if (ttlS === 0) return { ttlS, key: '' };
    const key = this.cache.key(
      call.auth.accountId,
      call.requested.object.id,
      call.format.name,
      call.decoded.request,
      call.wire?.body,
    );
    const hit = await this.cache.get(key);
    if (!hit) return { ttlS, key };
    const servedBy = call.plan.find(
      (d) =>
        d.entry.object.id === hit.headers['x-gateway-model'] && d.provider.id === hit.headers['x-gateway-provider'],
    );
    if (servedBy) call.served = this.serve(servedBy);
    await this.record(call, 'completed', undefined, undefined, 'cache_hit');
    return { ttlS, key, hit: cachedResponse(hit) };
  }

  /**
   * Runs one upstream step through the selection-and-failover loop (docs/routing.md): before the
   * client has any byte, a provider failure moves on to the next deployment, then the fallbacks.
   * `call.served` names the deployment trying, then the one that answered.
   */
  private async route<T>(
    call: Call,
    signal: AbortSignal,
    step: (args: LlmCall & { onAttempt: () => void }) => Promise<T>,
  ) {
    try {
      const result = await this.router.run(
        call.plan,
        (deployment, onAttempt) => {
          call.served = this.serve(deployment);
          call.encode.model = call.served.model.id;
          call.watch.serving(watchLabels(call.served));
          // The client's own body goes only to an upstream of its format; a fallback of another
          // format gets the canonical request.
          const wire = call.wire && call.served.adapter.passthroughFormat === call.wire.format ? call.wire : undefined;
          const headers = forwardedHeaders(call.served.adapter, call.format, call.requestHeaders);
          return call.watch.upstream(() =>
            step({ request: call.decoded.request, model: call.served.model, signal, onAttempt, wire, headers }),
          );
        },
        (err) => classifyLlmFailure(err, signal),
      );
      call.attempts = result.attempts;
      if (call.served.model.id !== call.requested.object.id)
        recordFallback(call.requested.object.id, call.served.model.id);
      return result;
    } catch (err) {
      if (err instanceof RouteFailure) call.attempts = err.attempts;
      throw err;
    }
  }

  private serve(deployment: Deployment): Served {
    const adapter = this.adapters.get(deployment.provider.id);
    if (!adapter) throw new Error(`provider ${deployment.provider.id} has no LLM adapter`);
    return {
      deployment,
      entry: deployment.entry,
      adapter,
      model: { id: deployment.entry.object.id, upstreamModel: deployment.upstreamModel },
    };
  }

  private idleMs(call: Call): number {
    return call.served.deployment.provider.stream_idle_timeout_ms ?? DEFAULT_STREAM_IDLE_MS;
  }

  private servedHeaders(call: Call): Record<string, string> {
    return routingHeaders(call.served.model.id, call.served.deployment.provider.id, call.attempts);
  }

  private async prepare(format: ClientFormat, body: unknown, auth: AuthContext, request: Request): Promise<Call> {
    const passesThrough = this.passesThrough(format, body);
    const view = passesThrough ? format.passthrough?.view : undefined;
    let decoded: DecodedClientRequest = refusedInFormat(format, () =>
      format.decode(view && isRecord(body) ? view(body) : body),
    );
    const modelId = decoded.request.model;
    const entry = this.ctx.catalog.get(modelId);
    if (!entry)
      throw new LlmError(
        format.family,
        'not_found',
        `The model '${modelId}' does not exist`,
        'model',
        'model_not_found',
      );
    if (entry.object.category !== 'llm') {
      throw new LlmError(
        format.family,
        'invalid_request',
        entry.object.category === 'embedding'
          ? `The model '${modelId}' is an embedding model; use POST /v1/embeddings`
          : `The model '${modelId}' is a ${entry.object.category} model; use POST /v1/tasks`,
        'model',
        'model_not_supported',
      );
    }
    this.keyGate?.checkModel(format.family, auth, modelId);
    let plan: Deployment[];
    try {
      plan = this.router.plan(entry, request.headers.get('x-gateway-fallbacks'));
    } catch (err) {
      throw err instanceof RoutingHeaderError ? new LlmError(format.family, 'invalid_request', err.message) : err;
    }
    const first = plan[0];
    if (!first || !this.adapters.has(first.provider.id))
      throw new LlmError(format.family, 'invalid_request', `The model '${modelId}' has no LLM adapter`, 'model');
    let history: CanonicalMessage[] = [];
    const previous = decoded.responses?.previousResponseId;
    if (previous) {
      const stored = await loadConversation(this.ctx.db, auth.accountId, previous);
      if (!stored)
        throw new LlmError(
          format.family,
          'not_found',
          `Previous response with id '${previous}' not found.`,
          'previous_response_id',
          'previous_response_not_found',
        );
      history = stored;
      // Instructions are not carried over; the new request's system messages lead.
      const system = decoded.request.messages.filter((m) => m.role === 'system');
      const rest = decoded.request.messages.filter((m) => m.role !== 'system');
      decoded = { ...decoded, request: { ...decoded.request, messages: [...system, ...history, ...rest] } };
    }
    let wire: Call['wire'];
    let uncounted: UncountedInput | undefined;
    const passthrough = format.passthrough;
    if (passesThrough && passthrough?.request && isRecord(body)) {
      // Nothing is dropped on the way: the translator's warnings about what the canonical request
      // leaves out do not apply; only the passthrough's own do.
      const request = passthrough.request;
      const built = refusedInFormat(format, () => request(body, history));
      wire = { format: passthrough.format, body: built.value };
      uncounted = built.uncounted;
      decoded = { ...decoded, warnings: built.warnings };
    }
    const served = this.serve(first);
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
   * A built-in tool billed per call (`web_search`…) goes upstream only to a model that prices it:
   * refused, naming the tool, for any model of the plan whose upstream gets the client's body.
   */
  private refuseUnpricedTools(format: ClientFormat, call: Call, { entry, provider }: Deployment) {
    const perCall = call.uncounted?.perCallTools;
    if (!perCall || this.adapters.get(provider.id)?.passthroughFormat !== call.wire?.format) return;
    const tool = unpricedTool(perCall, entry.config);
    if (!tool) return;
    throw new LlmError(
      format.family,
      'invalid_request',
      `${tool.at}.type: ${tool.name} is billed per call by the provider, and model '${entry.object.id}' sets no pricing.per_tool_call.${tool.name}`,
      `${tool.at}.type`,
    );
  }

  /**
   * Holds the call's worst case (input bound + max_tokens or the model's ceiling, at its prices)
   * against the account's spendable balance; refused → 402 saying what `max_tokens` would fit.
   * Any model of the plan may serve, so the hold is the dearest of their worst cases.
   */
  private async reserve(
    format: ClientFormat,
    call: Call,
    auth: AuthContext,
  ): Promise<{ reservationId: string; keyTicket: KeyTicket | null; heldUsd: number }> {
    // Every deployment, whichever models and providers serve it: any may get the client's body.
    if (call.uncounted?.perCallTools) for (const d of call.plan) this.refuseUnpricedTools(format, call, d);
    let config = call.requested.config;
    let hold = worstCaseHold(call.decoded.request, config, call.uncounted);
    const priced = new Set([config]);
    for (const d of call.plan) {
      if (priced.has(d.entry.config)) continue;
      priced.add(d.entry.config);
      const other = worstCaseHold(call.decoded.request, d.entry.config, call.uncounted);
      if (other.units > hold.units) {
        hold = other;
        config = d.entry.config;
      }
    }
    // The key's own limits first: a call its key refuses never touches the balance.
    const keyTicket = this.keyGate
      ? await this.keyGate.admit(format.family, auth, call.decoded.request, hold, call.uncounted)
      : null;
    const result = await this.reservations.reserve(auth.accountId, hold.units);
    if (result.ok) return { reservationId: result.id, keyTicket, heldUsd: unitsToUsd(hold.units) };
    if (keyTicket) this.keyGate?.release(keyTicket);
    const affordable = affordableOutputTokens(result.availableUnits, hold, config);
    const message =
      affordable > 0
        ? `insufficient balance: the balance covers at most ${affordable} output tokens for this request; lower max_tokens or top up the account`
        : 'insufficient balance: top up the account to continue';
    throw new LlmError(
      format.family,
      'insufficient_balance',
      message,
      affordable > 0 ? 'max_tokens' : null,
      'insufficient_balance',
    );
  }

  /** Saves a Responses conversation (before the client can refer to it). */
  private async store(call: Call, response: CanonicalResponse, json?: unknown): Promise<void> {
    const state = call.decoded.responses;
    if (!state?.store) return;
    const encoded = (json ??
      call.format.encodeResponse({ ...response, id: call.encode.id, model: call.served.model.id }, call.encode)) as {
      output?: unknown[];
    };
    const assistant: CanonicalMessage = { role: 'assistant', content: response.content };
    // Stored as Postgres can hold it: NUL and unpaired surrogates replaced (the upstream got them as sent).
    await saveResponse(this.ctx.db, {
      id: call.encode.id,
      accountId: call.auth.accountId,
      model: call.served.model.id,
      previousResponseId: state.previousResponseId,
      messages: toStorable([
        ...call.decoded.request.messages.filter((m) => m.role !== 'system'),
        assistant,
      ]) as CanonicalMessage[],
      outputItems: toStorable(encoded.output ?? []) as unknown[],
      response: toStorable(encoded),
    });
  }

  /** Resolves once the stream's charge is committed; the stream's last event waits for it. */
  private settle(call: Call, outcome: StreamOutcome): Promise<void> {
    if (outcome.status === 'failed') {
      // A stream that broke after its first byte cannot fail over, but it counts against the deployment.
      void this.router.health.failed(call.served.deployment, outcome.message);
      return this.record(call, 'failed', outcome.response, outcome.message);
    }
    return this.record(
      call,
      'completed',
      outcome.response,
      undefined,
      outcome.status === 'cancelled' ? 'client_disconnected' : undefined,
    );
  }

  /** Records the call and settles its hold; resolves when both are durably committed. */
  private record(
    call: Call,
    status: 'completed' | 'failed',
    response: CanonicalResponse | undefined,
    errorMessage?: string,
    endedBy?: string,
  ): Promise<void> {
    const usage = response?.usage;
    const text = response?.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('') ?? '';
    const toolCalls = response?.content.flatMap((p) => (p.type === 'tool-call' ? [p.name] : [])) ?? [];
    // The served model's prices; a cache hit carries no usage and costs nothing.
    const costUsd = usage ? llmCost(call.served.entry.config.pricing, usage) : 0;
    call.watch.settled(
      status === 'failed' ? 'failed' : endedBy === 'client_disconnected' ? 'cancelled' : 'completed',
      response,
      costUsd,
      errorMessage,
    );
    const recorded = this.recorder.record({
      taskId: crypto.randomUUID(),
      accountId: call.auth.accountId,
      model: call.served.model.id,
      provider: call.served.deployment.provider.id,
      status,
      input: recordableInput(call.body),
      output: response
        ? {
            ...(call.attempts > 1 ? { attempts: call.attempts } : {}),
            id: call.idFromUpstream ? response.id : call.encode.id,
            format: call.format.name,
            finish_reason: endedBy ?? response.finishReason.unified,
            text: storableString(text.length > 2000 ? `${text.slice(0, 2000)}…` : text),
            ...(toolCalls.length ? { tool_calls: toolCalls.map(storableString) } : {}),
            usage: usage && {
              input_tokens: usage.inputTokens,
              output_tokens: usage.outputTokens,
              total_tokens: usage.totalTokens,
              ...(usage.cachedInputTokens ? { cache_read_tokens: usage.cachedInputTokens } : {}),
              ...(usage.cacheWriteTokens ? { cache_write_tokens: usage.cacheWriteTokens } : {}),
              ...(usage.builtInToolCalls ? { built_in_tool_calls: usage.builtInToolCalls } : {}),
            },
          }
        : endedBy === 'cache_hit'
          ? { id: call.encode.id, format: call.format.name, cache: 'hit' }
          : null,
      errorMessage: errorMessage === undefined ? undefined : storableString(errorMessage),
      costUsd,
      createdAt: call.startedAt,
      reservationId: call.reservationId,
      requestId: call.watch.requestId,
      keyId: call.auth.keyId,
      keyHoldId: call.keyTicket?.holdId ?? undefined,
    });
    const ticket = call.keyTicket;
    // The key's tpm is corrected off the path of the client's last byte.
    if (ticket)
      void recorded.then(() => this.keyGate?.settled(ticket, usage ? usage.inputTokens + usage.outputTokens : 0));
    return recorded;
  }

  private failure(call: Call, cause: unknown): LlmError {
    const routed = cause instanceof RouteFailure;
    const err = routed ? cause.cause : cause;
    const failed = this.classified(call, err);
    if (routed) Object.assign(failed.headers, this.servedHeaders(call));
    return failed;
  }

  private classified(call: Call, err: unknown): LlmError {
    const family = call.format.family;
    if (err instanceof UpstreamError) {
      void this.record(call, 'failed', undefined, err.message);
      return new LlmError(family, kindForStatus(err.status), err.message, null, `upstream_${err.kind}`, err.status);
    }
    if (err instanceof LlmError || err instanceof InvalidRequestError) {
      if (call.reservationId) this.reservations.release(call.reservationId);
      call.watch.settled('failed', undefined, 0);
      if (call.keyTicket) this.keyGate?.release(call.keyTicket);
      return err instanceof LlmError ? err : new LlmError(family, 'invalid_request', err.message, err.param ?? null);
    }
    this.ctx.log.error('llm call failed', { model: call.served.model.id, ...errorFields(err) });
    void this.record(call, 'failed', undefined, (err as Error).message ?? String(err));
    return new LlmError(family, 'internal', 'internal error');
  }
}

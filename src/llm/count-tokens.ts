import { decodeAnthropicCountTokensRequest } from '../../translators/anthropic-messages/index.ts';
import { InvalidRequestError } from '../../translators/canonical/index.ts';
import type { LlmAdapter, ModelRef } from '../../providers/types.ts';
import { UpstreamError } from '../../providers/common/upstream-error.ts';
import type { AppContext } from '../app/context.ts';
import type { AuthContext } from '../auth/key-cache.ts';
import type { LlmKeyGate } from '../keys/llm-key-gate.ts';
import { errorFields } from '../ops/logger.ts';
import { LlmError, kindForStatus } from './llm-error.ts';
import { defaultTokenCounter, type TokenCounter } from './token-counter.ts';
import { warningHeaders } from './warning-headers.ts';
import { forwardedHeaders } from './forwarded-headers.ts';
import { anthropicMessagesFormat } from './formats/anthropic-messages-format.ts';
import { refusedInFormat } from './refused-in-format.ts';
import { anthropicCanonicalView, anthropicCountTokensRequest } from '../../translators/passthrough/index.ts';
import { isRecord } from '../../translators/common/validation.ts';

/**
 * `POST /v1/messages/count_tokens` (docs/api-contract.md): the input tokens of a Messages request
 * for any catalog LLM, as `{input_tokens}`. An upstream that can count (Anthropic: its own
 * count_tokens endpoint; the sandbox: its whitespace count) is asked; any other model is counted
 * by the gateway's token counter. Free: nothing is held, charged or recorded.
 */
export class TokenCountService {
  constructor(
    private readonly ctx: Pick<AppContext, 'catalog' | 'log'>,
    private readonly adapters: ReadonlyMap<string, LlmAdapter>,
    /** The API key's model allow-list (docs/keys.md): a key kept to some models counts only for them. */
    private readonly keyGate?: LlmKeyGate,
    private readonly counter: TokenCounter = defaultTokenCounter,
  ) {}

  async handle(body: unknown, auth: AuthContext, request: Request): Promise<Response> {
    // Toward an Anthropic upstream the client's own body is counted: the gateway reads it as a
    // passed-through Messages body is read (anthropic-canonical-view.ts), and sends it as written.
    const passes = isRecord(body) && this.anthropicUpstream(body.model);
    const decoded = refusedInFormat(anthropicMessagesFormat, () =>
      decodeAnthropicCountTokensRequest(passes ? anthropicCanonicalView(body) : body),
    );
    const own = passes ? refusedInFormat(anthropicMessagesFormat, () => anthropicCountTokensRequest(body)) : undefined;
    const modelId = decoded.value.model;
    const entry = this.ctx.catalog.get(modelId);
    if (!entry)
      throw new LlmError('anthropic', 'not_found', `The model '${modelId}' does not exist`, 'model', 'model_not_found');
    if (entry.object.category !== 'llm')
      throw new LlmError(
        'anthropic',
        'invalid_request',
        `model: '${modelId}' is a ${entry.object.category} model; count_tokens takes an LLM`,
        'model',
        'model_not_supported',
      );
    this.keyGate?.checkModel('anthropic', auth, entry.object.id);
    const adapter = this.adapters.get(entry.provider.id);
    const model: ModelRef = {
      id: entry.object.id,
      upstreamModel: entry.config.upstream_model ?? entry.object.id.slice(entry.provider.id.length + 1),
    };
    let inputTokens: number;
    let warnings = own ? own.warnings : decoded.warnings;
    if (adapter?.countTokens) {
      try {
        const headers = forwardedHeaders(adapter, anthropicMessagesFormat, request.headers);
        const wire = own && { format: 'anthropic-messages' as const, body: own.value };
        const counted = await adapter.countTokens({
          request: decoded.value,
          model,
          signal: request.signal,
          headers,
          ...(wire ? { wire } : {}),
        });
        inputTokens = counted.inputTokens;
        warnings = [...warnings, ...counted.warnings];
      } catch (err) {
        throw this.failure(model, err);
      }
    } else {
      inputTokens = this.counter.countRequest(decoded.value);
    }
    return Response.json({ input_tokens: inputTokens }, { headers: warningHeaders(warnings) });
  }

  /** Whether `model` names a catalog model whose upstream speaks Messages itself. */
  private anthropicUpstream(model: unknown): boolean {
    const entry = typeof model === 'string' ? this.ctx.catalog.get(model) : undefined;
    return !!entry && this.adapters.get(entry.provider.id)?.passthroughFormat === 'anthropic-messages';
  }

  private failure(model: ModelRef, err: unknown): LlmError {
    if (err instanceof UpstreamError)
      return new LlmError(
        'anthropic',
        kindForStatus(err.status),
        err.message,
        null,
        `upstream_${err.kind}`,
        err.status,
      );
    if (err instanceof LlmError) return err;
    if (err instanceof InvalidRequestError)
      return new LlmError('anthropic', 'invalid_request', err.message, err.param ?? null);
    this.ctx.log.error('count_tokens failed', { model: model.id, ...errorFields(err) });
    return new LlmError('anthropic', 'internal', 'internal error');
  }
}

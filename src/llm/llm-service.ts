import { InvalidRequestError, type CanonicalMessage, type CanonicalResponse, type TranslationWarning } from '../../translators/canonical/index.ts';
import { mintId } from '../../translators/shared/ids.ts';
import type { LlmAdapter, ModelRef } from '../../providers/types.ts';
import { UpstreamError } from '../../providers/shared/upstream-error.ts';
import type { AppContext } from '../app/context.ts';
import type { AuthContext } from '../auth/key-cache.ts';
import type { CatalogEntry } from '../catalog/catalog.ts';
import { errorFields } from '../ops/logger.ts';
import type { ClientFormat, DecodedClientRequest, EncodeContext } from './client-format.ts';
import { LlmError, kindForStatus } from './llm-error.ts';
import { OutcomeTap, type StreamOutcome } from './outcome-tap.ts';
import { estimateTokens, llmCost } from './pricing.ts';
import { recordableInput } from './record-input.ts';
import { loadConversation, saveResponse } from './responses-store.ts';
import { clientStream } from './stream-pipeline.ts';
import type { UsageRecorder } from './usage-recorder.ts';

const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' };

/**
 * Lossy translations are never silent: what was dropped or changed is told to the client in one
 * header, as a JSON array of `{type, field, message}` (ASCII only, at most 4 KiB).
 */
function warningHeaders(warnings: TranslationWarning[]): Record<string, string> {
  let kept = warnings;
  let text = '';
  // Drop trailing warnings until the header fits; it always stays valid JSON.
  while (kept.length && (text = JSON.stringify(kept).replace(/[^\x20-\x7e]/g, '?')).length > 4096) kept = kept.slice(0, -1);
  return kept.length ? { 'x-gateway-warnings': text } : {};
}

interface Call {
  format: ClientFormat;
  decoded: DecodedClientRequest;
  entry: CatalogEntry;
  adapter: LlmAdapter;
  model: ModelRef;
  auth: AuthContext;
  body: unknown;
  encode: EncodeContext;
  startedAt: Date;
  /** Stored conversation this call continues (Responses), without system messages. */
  history: CanonicalMessage[];
}

/**
 * One LLM call on any client format against any upstream: decode, check, call, translate or
 * pass through, then record usage and charge — the records are written off the hot path.
 */
export class LlmService {
  constructor(
    private readonly ctx: AppContext,
    private readonly adapters: ReadonlyMap<string, LlmAdapter>,
    private readonly recorder: UsageRecorder,
  ) {}

  async handle(format: ClientFormat, body: unknown, auth: AuthContext, request: Request): Promise<Response> {
    const call = await this.prepare(format, body, auth);
    const abort = new AbortController();
    const onClientGone = () => abort.abort(new Error('client disconnected'));
    request.signal.addEventListener('abort', onClientGone, { once: true });
    const signal = abort.signal;
    const callArgs = { request: call.decoded.request, model: call.model, signal };
    try {
      if (!call.decoded.request.stream) {
        const { response, warnings } = await call.adapter.generate(callArgs);
        const json = call.format.encodeResponse({ ...response, id: call.encode.id, model: call.model.id }, call.encode);
        await this.store(call, response, json);
        this.record(call, 'completed', response);
        return Response.json(json, { headers: warningHeaders([...call.decoded.warnings, ...warnings]) });
      }
      const upstream = await call.adapter.stream(callArgs);
      const inputEstimate = call.decoded.request.messages.reduce((n, m) => n + m.content.reduce((k, p) => k + (p.type === 'text' ? estimateTokens(p.text) : 0), 0), 0);
      const tap = new OutcomeTap(
        call.model.id,
        inputEstimate,
        (outcome) => this.settle(call, outcome),
        call.decoded.responses?.store ? (response) => this.store(call, response) : undefined,
      );
      const headers = { ...SSE_HEADERS, ...warningHeaders([...call.decoded.warnings, ...upstream.warnings]) };
      return new Response(clientStream({ upstream, model: call.model, format, ctx: call.encode, tap, abort }), { headers });
    } catch (err) {
      request.signal.removeEventListener('abort', onClientGone);
      throw this.failure(call, err);
    }
  }

  private async prepare(format: ClientFormat, body: unknown, auth: AuthContext): Promise<Call> {
    let decoded: DecodedClientRequest;
    try {
      decoded = format.decode(body);
    } catch (err) {
      if (err instanceof InvalidRequestError) throw new LlmError(format.family, 'invalid_request', err.message, err.param ?? null);
      throw err;
    }
    const modelId = decoded.request.model;
    const entry = this.ctx.catalog.get(modelId);
    if (!entry) throw new LlmError(format.family, 'not_found', `The model '${modelId}' does not exist`, 'model', 'model_not_found');
    if (entry.object.category !== 'llm') {
      throw new LlmError(format.family, 'invalid_request', `The model '${modelId}' is a ${entry.object.category} model; use POST /v1/tasks`, 'model', 'model_not_supported');
    }
    const adapter = this.adapters.get(entry.provider.id);
    if (!adapter) throw new LlmError(format.family, 'invalid_request', `The model '${modelId}' has no LLM adapter`, 'model');
    const account = await this.ctx.accounts.get(auth.accountId);
    if (!account || Number(account.balance_usd) <= 0) {
      throw new LlmError(format.family, 'insufficient_balance', 'insufficient balance: top up the account to continue', null, 'insufficient_balance');
    }
    let history: CanonicalMessage[] = [];
    const previous = decoded.responses?.previousResponseId;
    if (previous) {
      const stored = await loadConversation(this.ctx.db, auth.accountId, previous);
      if (!stored) throw new LlmError(format.family, 'not_found', `Previous response with id '${previous}' not found.`, 'previous_response_id', 'previous_response_not_found');
      history = stored;
      // Instructions are not carried over; the new request's system messages lead.
      const system = decoded.request.messages.filter((m) => m.role === 'system');
      const rest = decoded.request.messages.filter((m) => m.role !== 'system');
      decoded = { ...decoded, request: { ...decoded.request, messages: [...system, ...history, ...rest] } };
    }
    const model: ModelRef = { id: entry.object.id, upstreamModel: entry.config.upstream_model ?? entry.object.id.slice(entry.provider.id.length + 1) };
    const encode: EncodeContext = { id: mintId(format.idPrefix), model: model.id, created: Math.floor(Date.now() / 1000), decoded };
    return { format, decoded, entry, adapter, model, auth, body, encode, startedAt: new Date(), history };
  }

  /** Saves a Responses conversation (before the client can refer to it). */
  private async store(call: Call, response: CanonicalResponse, json?: unknown): Promise<void> {
    const state = call.decoded.responses;
    if (!state?.store) return;
    const encoded = (json ?? call.format.encodeResponse({ ...response, id: call.encode.id, model: call.model.id }, call.encode)) as { output?: unknown[] };
    const assistant: CanonicalMessage = { role: 'assistant', content: response.content };
    await saveResponse(this.ctx.db, {
      id: call.encode.id,
      accountId: call.auth.accountId,
      model: call.model.id,
      previousResponseId: state.previousResponseId,
      messages: [...call.decoded.request.messages.filter((m) => m.role !== 'system'), assistant],
      outputItems: encoded.output ?? [],
      response: encoded,
    });
  }

  private settle(call: Call, outcome: StreamOutcome): void {
    if (outcome.status === 'failed') this.record(call, 'failed', outcome.response, outcome.message);
    else this.record(call, 'completed', outcome.response, undefined, outcome.status === 'cancelled' ? 'client_disconnected' : undefined);
  }

  private record(call: Call, status: 'completed' | 'failed', response: CanonicalResponse | undefined, errorMessage?: string, endedBy?: string): void {
    const usage = response?.usage;
    const text = response?.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('') ?? '';
    const toolCalls = response?.content.flatMap((p) => (p.type === 'tool-call' ? [p.name] : [])) ?? [];
    this.recorder.record({
      taskId: crypto.randomUUID(),
      accountId: call.auth.accountId,
      model: call.model.id,
      provider: call.entry.provider.id,
      status,
      input: recordableInput(call.body),
      output: response
        ? {
            id: call.encode.id,
            format: call.format.name,
            finish_reason: endedBy ?? response.finishReason.unified,
            text: text.length > 2000 ? `${text.slice(0, 2000)}…` : text,
            ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
            usage: usage && { input_tokens: usage.inputTokens, output_tokens: usage.outputTokens, total_tokens: usage.totalTokens },
          }
        : null,
      errorMessage,
      costUsd: usage ? llmCost(call.entry.config.pricing, usage) : 0,
      createdAt: call.startedAt,
    });
  }

  private failure(call: Call, err: unknown): LlmError {
    const family = call.format.family;
    if (err instanceof UpstreamError) {
      this.record(call, 'failed', undefined, err.message);
      return new LlmError(family, kindForStatus(err.status), err.message, null, `upstream_${err.kind}`, err.status);
    }
    if (err instanceof LlmError) return err;
    if (err instanceof InvalidRequestError) return new LlmError(family, 'invalid_request', err.message, err.param ?? null);
    this.ctx.log.error('llm call failed', { model: call.model.id, ...errorFields(err) });
    this.record(call, 'failed', undefined, (err as Error).message ?? String(err));
    return new LlmError(family, 'internal', 'internal error');
  }
}

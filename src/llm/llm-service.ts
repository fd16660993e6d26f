import {
  InvalidRequestError,
  type CanonicalMessage,
  type CanonicalResponse,
  type TranslationWarning,
} from '../../translators/canonical/index.ts';
import { mintId } from '../../translators/shared/ids.ts';
import type { LlmAdapter, ModelRef } from '../../providers/types.ts';
import { UpstreamError } from '../../providers/shared/upstream-error.ts';
import type { AppContext } from '../app/context.ts';
import type { BalanceReservations } from '../accounts/balance-reservations.ts';
import type { AuthContext } from '../auth/key-cache.ts';
import type { CatalogEntry } from '../catalog/catalog.ts';
import { storableString, toStorable } from '../http/hostile-json.ts';
import { errorFields } from '../ops/logger.ts';
import type { ClientFormat, DecodedClientRequest, EncodeContext } from './client-format.ts';
import { LlmError, kindForStatus } from './llm-error.ts';
import { OutcomeTap, type StreamOutcome } from './outcome-tap.ts';
import { estimateTokens, llmCost } from './pricing.ts';
import { recordableInput } from './record-input.ts';
import { loadConversation, saveResponse } from './llm-responses.repository.ts';
import { clientStream } from './stream-pipeline.ts';
import type { UsageRecorder } from './usage-recorder.ts';
import { affordableOutputTokens, worstCaseHold } from './worst-case.ts';
import type { KeyTicket, LlmKeyGate } from '../keys/llm-key-gate.ts';
import { unitsToUsd } from '../accounts/money.ts';

const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
};

/**
 * Lossy translations are never silent: what was dropped or changed is told to the client in one
 * header, as a JSON array of `{type, field, message}` (ASCII only, at most 4 KiB).
 */
function warningHeaders(warnings: TranslationWarning[]): Record<string, string> {
  const ascii = (list: TranslationWarning[]) => JSON.stringify(list).replace(/[^\x20-\x7e]/g, '?');
  // Drop trailing warnings until the header fits; it always stays valid JSON.
  for (let kept = warnings; kept.length; kept = kept.slice(0, -1)) {
    const text = ascii(kept);
    if (text.length <= 4096) return { 'x-gateway-warnings': text };
  }
  return {};
}

/** The call's charge in USD (docs/keys.md): exact on a JSON answer, the held ceiling on a stream. */
const costHeader = (usd: number): Record<string, string> => ({ 'x-gateway-cost-usd': String(usd) });

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
  /** The balance hold taken at admission; settled with the call's record. */
  reservationId: string;
  /** What the call took from its API key (budget hold, tpm estimate): src/keys/llm-key-gate.ts. */
  keyTicket: KeyTicket | null;
  /** The worst case held, in USD: a stream's `x-gateway-cost-usd` (its charge is known only at its end). */
  heldUsd: number;
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
    /** The API key's limits (docs/keys.md); absent in tests that exercise the balance alone. */
    private readonly keyGate?: LlmKeyGate,
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
        // Billed before answered: a crash after this line cannot lose the charge.
        await this.record(call, 'completed', response);
        const cost = response.usage ? llmCost(call.entry.config.pricing, response.usage) : 0;
        return Response.json(json, {
          headers: { ...warningHeaders([...call.decoded.warnings, ...warnings]), ...costHeader(cost) },
        });
      }
      const upstream = await call.adapter.stream(callArgs);
      const inputEstimate = call.decoded.request.messages.reduce(
        (n, m) => n + m.content.reduce((k, p) => k + (p.type === 'text' ? estimateTokens(p.text) : 0), 0),
        0,
      );
      const tap = new OutcomeTap(
        call.model.id,
        inputEstimate,
        (outcome) => this.settle(call, outcome),
        call.decoded.responses?.store ? (response) => this.store(call, response) : undefined,
      );
      const headers = {
        ...SSE_HEADERS,
        ...warningHeaders([...call.decoded.warnings, ...upstream.warnings]),
        ...costHeader(call.heldUsd),
      };
      return new Response(clientStream({ upstream, model: call.model, format, ctx: call.encode, tap, abort }), {
        headers,
      });
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
      if (err instanceof InvalidRequestError)
        throw new LlmError(format.family, 'invalid_request', err.message, err.param ?? null);
      throw err;
    }
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
        `The model '${modelId}' is a ${entry.object.category} model; use POST /v1/tasks`,
        'model',
        'model_not_supported',
      );
    }
    this.keyGate?.checkModel(format.family, auth, modelId);
    const adapter = this.adapters.get(entry.provider.id);
    if (!adapter)
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
    const model: ModelRef = {
      id: entry.object.id,
      upstreamModel: entry.config.upstream_model ?? entry.object.id.slice(entry.provider.id.length + 1),
    };
    const encode: EncodeContext = {
      id: mintId(format.idPrefix),
      model: model.id,
      created: Math.floor(Date.now() / 1000),
      decoded,
    };
    const { reservationId, keyTicket, heldUsd } = await this.reserve(format, entry, decoded, auth);
    return {
      format,
      decoded,
      entry,
      adapter,
      model,
      auth,
      body,
      encode,
      startedAt: new Date(),
      history,
      reservationId,
      keyTicket,
      heldUsd,
    };
  }

  /**
   * Holds the call's worst case (input bound + max_tokens or the model's ceiling, at its prices)
   * against the account's spendable balance; refused → 402 saying what `max_tokens` would fit.
   */
  private async reserve(
    format: ClientFormat,
    entry: CatalogEntry,
    decoded: DecodedClientRequest,
    auth: AuthContext,
  ): Promise<{ reservationId: string; keyTicket: KeyTicket | null; heldUsd: number }> {
    const hold = worstCaseHold(decoded.request, entry.config);
    // The key's own limits first: a call its key refuses never touches the balance.
    const keyTicket = this.keyGate ? await this.keyGate.admit(format.family, auth, decoded.request, hold) : null;
    const result = await this.reservations.reserve(auth.accountId, hold.units);
    if (result.ok) return { reservationId: result.id, keyTicket, heldUsd: unitsToUsd(hold.units) };
    if (keyTicket) await this.keyGate?.release(keyTicket);
    const affordable = affordableOutputTokens(result.availableUnits, hold, entry.config);
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
      call.format.encodeResponse({ ...response, id: call.encode.id, model: call.model.id }, call.encode)) as {
      output?: unknown[];
    };
    const assistant: CanonicalMessage = { role: 'assistant', content: response.content };
    // Stored as Postgres can hold it: NUL and unpaired surrogates replaced (the upstream got them as sent).
    await saveResponse(this.ctx.db, {
      id: call.encode.id,
      accountId: call.auth.accountId,
      model: call.model.id,
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
    if (outcome.status === 'failed') return this.record(call, 'failed', outcome.response, outcome.message);
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
    const recorded = this.recorder.record({
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
            text: storableString(text.length > 2000 ? `${text.slice(0, 2000)}…` : text),
            ...(toolCalls.length ? { tool_calls: toolCalls.map(storableString) } : {}),
            usage: usage && {
              input_tokens: usage.inputTokens,
              output_tokens: usage.outputTokens,
              total_tokens: usage.totalTokens,
            },
          }
        : null,
      errorMessage: errorMessage === undefined ? undefined : storableString(errorMessage),
      costUsd: usage ? llmCost(call.entry.config.pricing, usage) : 0,
      createdAt: call.startedAt,
      reservationId: call.reservationId,
      keyId: call.auth.keyId,
      keyHoldId: call.keyTicket?.holdId ?? undefined,
    });
    const ticket = call.keyTicket;
    // The key's tpm is corrected off the path of the client's last byte.
    if (ticket)
      void recorded.then(() => this.keyGate?.settled(ticket, usage ? usage.inputTokens + usage.outputTokens : 0));
    return recorded;
  }

  private failure(call: Call, err: unknown): LlmError {
    const family = call.format.family;
    if (err instanceof UpstreamError) {
      void this.record(call, 'failed', undefined, err.message);
      return new LlmError(family, kindForStatus(err.status), err.message, null, `upstream_${err.kind}`, err.status);
    }
    if (err instanceof LlmError || err instanceof InvalidRequestError) {
      this.reservations.release(call.reservationId);
      if (call.keyTicket) void this.keyGate?.release(call.keyTicket);
      return err instanceof LlmError ? err : new LlmError(family, 'invalid_request', err.message, err.param ?? null);
    }
    this.ctx.log.error('llm call failed', { model: call.model.id, ...errorFields(err) });
    void this.record(call, 'failed', undefined, (err as Error).message ?? String(err));
    return new LlmError(family, 'internal', 'internal error');
  }
}

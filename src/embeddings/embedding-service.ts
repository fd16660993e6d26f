import { InvalidRequestError } from '../../translators/canonical/index.ts';
import {
  decodeEmbeddingRequest,
  encodeEmbeddingResponse,
  type CanonicalEmbeddingResponse,
  type DecodedEmbeddingRequest,
} from '../../translators/embeddings/index.ts';
import type { EmbeddingAdapter, ModelRef } from '../../providers/types.ts';
import { UpstreamError } from '../../providers/common/upstream-error.ts';
import type { BalanceReservations } from '../accounts/balance-reservations.ts';
import type { AppContext } from '../app/context.ts';
import type { AuthContext } from '../auth/key-cache.ts';
import type { CatalogEntry } from '../catalog/catalog.ts';
import { ConfigError } from '../config/config-error.ts';
import { costHeader } from '../http/cost-header.ts';
import { storableString } from '../http/hostile-json.ts';
import { LlmError, kindForStatus } from '../llm/llm-error.ts';
import { llmCost } from '../llm/pricing.ts';
import { defaultTokenCounter, type TokenCounter } from '../llm/token-counter.ts';
import type { UsageRecorder } from '../llm/usage-recorder.ts';
import { warningHeaders } from '../llm/warning-headers.ts';
import { observationOf } from '../observability/http-observer.ts';
import { serverTimingHeaders } from '../observability/server-timing.ts';
import { errorFields } from '../ops/logger.ts';
import { embeddingHold, estimateEmbeddingTokens } from './embedding-hold.ts';
import type { KeyTicket, LlmKeyGate } from '../keys/llm-key-gate.ts';
import { recordableEmbeddingInput } from './embedding-record.ts';
import { holdAfterKey } from '../llm/hold-after-key.ts';

interface Call {
  decoded: DecodedEmbeddingRequest;
  entry: CatalogEntry;
  model: ModelRef;
  auth: AuthContext;
  startedAt: Date;
  reservationId: string;
  /** What the call took from its API key (budget hold, tpm estimate): src/keys/llm-key-gate.ts. */
  keyTicket: KeyTicket | null;
}

/** An embeddings call's charge: its input tokens at the model's input price. */
const embeddingCost = (entry: CatalogEntry, inputTokens: number) =>
  llmCost(entry.config.pricing, { inputTokens, outputTokens: 0, totalTokens: inputTokens });

const invalid = (message: string, param: string | null, code: string | null = null) =>
  new LlmError('openai', 'invalid_request', message, param, code);

/**
 * `POST /v1/embeddings` (docs/api-contract.md) for models of category `embedding`: decode, hold
 * the worst case, call the provider, answer in the client's encoding, and charge the upstream's
 * token count like an LLM call (reserve, then settle: docs/money.md) — the task record and ledger
 * row carry category `embedding`, and the charge is committed before the answer is sent.
 */
export class EmbeddingService {
  constructor(
    private readonly ctx: Pick<AppContext, 'catalog' | 'log'>,
    private readonly adapters: ReadonlyMap<string, EmbeddingAdapter>,
    private readonly recorder: UsageRecorder,
    private readonly reservations: BalanceReservations,
    /** The API key's limits (docs/keys.md): allow-list, budget, tpm. */
    private readonly keyGate?: LlmKeyGate,
    private readonly counter: TokenCounter = defaultTokenCounter,
  ) {
    // An embedding model no provider can serve is a configuration error, found at start.
    for (const entry of ctx.catalog.entries)
      if (entry.object.category === 'embedding' && !adapters.has(entry.provider.id))
        throw new ConfigError(
          `models: ${entry.object.id}: provider ${entry.provider.id} (kind ${entry.provider.kind}) cannot serve embeddings`,
        );
  }

  async handle(body: unknown, auth: AuthContext, request: Request): Promise<Response> {
    const { decoded, warnings, entry, adapter, model } = this.prepare(body);
    this.keyGate?.checkModel('openai', auth, model.id);
    const { reservationId, keyTicket } = await this.reserve(decoded, entry, auth);
    const call: Call = { decoded, entry, model, auth, startedAt: new Date(), reservationId, keyTicket };
    let result: Awaited<ReturnType<EmbeddingAdapter['embed']>>;
    const upstreamStarted = performance.now();
    try {
      result = await adapter.embed({ request: decoded.request, model, signal: request.signal });
    } catch (err) {
      throw this.failure(call, err);
    }
    const upstreamMs = performance.now() - upstreamStarted;
    const inputTokens = result.response.inputTokens ?? this.estimate(decoded);
    // Billed before answered: a crash after this line cannot lose the charge.
    const cost = embeddingCost(entry, inputTokens);
    const settling = performance.now();
    await this.record(call, 'completed', result.response, inputTokens, cost);
    const settleMs = performance.now() - settling;
    const json = encodeEmbeddingResponse(result.response, model.id, decoded.encoding, inputTokens);
    const arrived = observationOf(request)?.startedAt;
    const timing = arrived === undefined ? undefined : { totalMs: performance.now() - arrived, upstreamMs, settleMs };
    return Response.json(json, {
      headers: {
        ...warningHeaders([...warnings, ...result.warnings]),
        // As on the LLM endpoints: the charge; a refusal carries 0 (LlmError).
        ...costHeader(cost),
        ...serverTimingHeaders(timing),
      },
    });
  }

  private prepare(body: unknown) {
    let translated: ReturnType<typeof decodeEmbeddingRequest>;
    try {
      translated = decodeEmbeddingRequest(body);
    } catch (err) {
      if (err instanceof InvalidRequestError) throw invalid(err.message, err.param ?? null);
      throw err;
    }
    const decoded = translated.value;
    const modelId = decoded.request.model;
    const entry = this.ctx.catalog.get(modelId);
    if (!entry)
      throw new LlmError('openai', 'not_found', `The model '${modelId}' does not exist`, 'model', 'model_not_found');
    if (entry.object.category !== 'embedding')
      throw invalid(
        `The model '${modelId}' is a${entry.object.category === 'llm' ? 'n' : ''} ${entry.object.category} model, not an embedding model`,
        'model',
        'model_not_supported',
      );
    const adapter = this.adapters.get(entry.provider.id);
    if (!adapter) throw invalid(`The model '${modelId}' has no embeddings adapter`, 'model');
    const model: ModelRef = {
      id: entry.object.id,
      upstreamModel: entry.config.upstream_model ?? entry.object.id.slice(entry.provider.id.length + 1),
    };
    return { decoded, warnings: translated.warnings, entry, adapter, model };
  }

  /**
   * Takes the call's tokens estimate and worst-case hold from its key, then holds the worst case
   * against the spendable balance; refused → 402 (429 over the key's tpm).
   */
  private async reserve(
    decoded: DecodedEmbeddingRequest,
    entry: CatalogEntry,
    auth: AuthContext,
  ): Promise<{ reservationId: string; keyTicket: KeyTicket | null }> {
    const hold = embeddingHold(decoded.request.inputs, entry.config);
    const keyTicket = this.keyGate
      ? await this.keyGate.admitTokens(
          'openai',
          auth,
          () => estimateEmbeddingTokens(decoded.request.inputs),
          hold.units,
        )
      : null;
    const result = await holdAfterKey(this.reservations, this.keyGate, keyTicket, auth.accountId, hold.units);
    if (result.ok) return { reservationId: result.id, keyTicket };
    throw new LlmError(
      'openai',
      'insufficient_balance',
      'insufficient balance: top up the account to continue',
      null,
      'insufficient_balance',
    );
  }

  /** The charge when the upstream reported no usage: the gateway's own count. */
  private estimate(decoded: DecodedEmbeddingRequest): number {
    return decoded.request.inputs.reduce(
      (sum, input) => sum + (input.type === 'text' ? this.counter.countText(input.text) : input.tokens.length),
      0,
    );
  }

  /** Writes the task record (category `embedding`) and settles the hold; resolves once committed. */
  private record(
    call: Call,
    status: 'completed' | 'failed',
    response: CanonicalEmbeddingResponse | undefined,
    inputTokens: number,
    costUsd: number,
    errorMessage?: string,
  ): Promise<void> {
    const recorded = this.recorder.record({
      taskId: crypto.randomUUID(),
      accountId: call.auth.accountId,
      model: call.model.id,
      provider: call.entry.provider.id,
      category: 'embedding',
      status,
      input: recordableEmbeddingInput(call.decoded.request, call.decoded.encoding),
      output: response
        ? {
            object: 'list',
            count: response.vectors.length,
            dimensions: response.vectors[0]?.length ?? 0,
            usage: { input_tokens: inputTokens, total_tokens: inputTokens },
          }
        : null,
      errorMessage: errorMessage === undefined ? undefined : storableString(errorMessage),
      costUsd,
      createdAt: call.startedAt,
      reservationId: call.reservationId,
      keyId: call.auth.keyId,
      keyHoldId: call.keyTicket?.holdId ?? undefined,
    });
    const ticket = call.keyTicket;
    // The key's tpm is corrected off the answer's path.
    if (ticket) void recorded.then(() => this.keyGate?.settled(ticket, response ? inputTokens : 0));
    return recorded;
  }

  private failure(call: Call, err: unknown): LlmError {
    if (err instanceof UpstreamError) {
      void this.record(call, 'failed', undefined, 0, 0, err.message);
      return new LlmError('openai', kindForStatus(err.status), err.message, null, `upstream_${err.kind}`, err.status);
    }
    if (err instanceof InvalidRequestError || err instanceof LlmError) {
      this.reservations.release(call.reservationId);
      if (call.keyTicket) this.keyGate?.release(call.keyTicket);
      return err instanceof LlmError ? err : invalid(err.message, err.param ?? null);
    }
    this.ctx.log.error('embeddings call failed', { model: call.model.id, ...errorFields(err) });
    void this.record(call, 'failed', undefined, 0, 0, (err as Error).message ?? String(err));
    return new LlmError('openai', 'internal', 'internal error');
  }
}

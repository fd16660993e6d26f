import { type CanonicalResponse, InvalidRequestError } from '../../translators/canonical/index.ts';
import type { LlmAdapter, LlmCall } from '../../providers/types.ts';
import { UpstreamError } from '../../providers/common/upstream-error.ts';
import type { Router } from '../routing/router.ts';
import { RouteFailure } from '../routing/failover.ts';
import { parseCacheHeader, RoutingHeaderError } from '../routing/routing-headers.ts';
import { classifyLlmFailure } from './llm-routing.ts';
import type { ResponseCache } from './response-cache.ts';
import { cachedResponse, capturedStream, type Capture } from './cached-response.ts';
import { awaitFirstEvent } from './first-event.ts';
import type { AppContext } from '../app/context.ts';
import type { BalanceReservations } from '../accounts/balance-reservations.ts';
import type { AuthContext } from '../auth/key-cache.ts';
import { errorFields } from '../ops/logger.ts';
import { jsonAnswer } from './json-answer.ts';
import { FirstTokenTap } from '../observability/first-token-tap.ts';
import { recordFallback } from '../observability/metrics.ts';
import type { ClientFormat } from './client-format.ts';
import { LlmError, kindForStatus } from './llm-error.ts';
import type { StreamOutcome } from './outcome-tap.ts';
import { estimateInputTokens } from './input-estimate.ts';
import { clientStream, passthroughRulesFor } from './stream-pipeline.ts';
import { holdClientConnection } from '../http/client-idle.ts';
import { forwardedHeaders } from './forwarded-headers.ts';
import { JSON_HEADERS, SSE_HEADERS } from '../http/answer-headers.ts';
import { costHeader } from '../http/cost-header.ts';
import type { UsageRecorder } from './usage-recorder.ts';
import { warningHeaders } from './warning-headers.ts';
import type { LlmKeyGate } from '../keys/llm-key-gate.ts';
import { serverTimingHeaders } from '../observability/server-timing.ts';
import { type Call, decodedFor, serve, servedHeaders, watchLabels, wireFor } from './llm-call.ts';
import { UntranslatableBody } from './untranslatable-body.ts';
import { type PrepareDeps, prepareCall } from './prepare-call.ts';
import { type HoldDeps, holdCall } from './hold-call.ts';
import { type RecordDeps, recordCall } from './record-call.ts';
import { storeResponse } from './store-response.ts';

/** A stream whose upstream sends nothing for this long ends with the format's error event. */
const DEFAULT_STREAM_IDLE_MS = 60_000;

/** A call that failed after its record was written (`chargedFailure`): nothing more to record or release. */
class RecordedFailure extends Error {}

/**
 * One LLM call on any client format against any upstream: prepare (prepare-call.ts), answer from
 * the exact cache, hold (hold-call.ts), call through routing and failover, translate or pass
 * through, then record usage and charge (record-call.ts).
 */
export class LlmService {
  /** What the call's steps read, gathered once. */
  private readonly deps: PrepareDeps & HoldDeps & RecordDeps;

  constructor(
    /** What a call reads: the catalog, the stored Responses conversations (db), the log. */
    private readonly ctx: Pick<AppContext, 'catalog' | 'db' | 'log'>,
    private readonly adapters: ReadonlyMap<string, LlmAdapter>,
    recorder: UsageRecorder,
    private readonly reservations: BalanceReservations,
    private readonly router: Router,
    private readonly cache: ResponseCache,
    /** The API key's limits (docs/keys.md); absent in tests that exercise the balance alone. */
    private readonly keyGate?: LlmKeyGate,
  ) {
    this.deps = { ctx, adapters, router, keyGate, recorder, reservations };
  }

  async handle(format: ClientFormat, body: unknown, auth: AuthContext, request: Request): Promise<Response> {
    const call = await prepareCall(this.deps, format, body, auth, request);
    const { ttlS: cacheTtlS, key: cacheKey, hit } = await this.lookUp(call, request.headers);
    if (hit) return hit;
    Object.assign(call, await holdCall(this.deps, call));
    // From here the call waits on its upstream, bounded by the provider's own timeouts: Bun's
    // idle limit would cut a client waiting longer (src/http/client-idle.ts).
    const releaseConnection = holdClientConnection(request);
    const abort = new AbortController();
    const onClientGone = () => abort.abort(new Error('client disconnected'));
    request.signal.addEventListener('abort', onClientGone, { once: true });
    const signal = abort.signal;
    const capture: Capture | undefined =
      cacheTtlS > 0
        ? { put: (answer) => this.cache.put(call.auth.accountId, cacheKey, answer, cacheTtlS), completed: false }
        : undefined;
    const cacheHeaders: Record<string, string> = cacheTtlS > 0 ? { 'x-gateway-cache': 'miss' } : {};
    try {
      if (!call.decoded.request.stream) {
        const { value } = await this.route(call, signal, (args) => call.served.adapter.generate(args));
        const { response, warnings } = value;
        let answer: ReturnType<typeof jsonAnswer>;
        try {
          answer = jsonAnswer(call.format, value, call.encode);
          call.idFromUpstream = answer.idFromUpstream;
          await storeResponse(this.ctx.db, call, response, answer.json);
        } catch (err) {
          throw await this.chargedFailure(call, response, err);
        }
        // Billed before answered: a crash after this line cannot lose the charge.
        const settling = performance.now();
        await recordCall(this.deps, call, 'completed', response);
        const timing = call.watch.answered(performance.now() - settling);
        const headers = {
          ...warningHeaders([...decodedFor(call).warnings, ...warnings, ...(answer.warnings ?? [])]),
          ...servedHeaders(call),
          // The exact charge of a JSON answer: the record's.
          ...costHeader(call.chargedUsd ?? 0),
        };
        if (capture && response.finishReason.unified !== 'error')
          void capture.put({ kind: 'json-text', text: answer.text, headers });
        releaseConnection();
        // Not in `headers`: a cached copy must not replay this call's timing.
        return new Response(answer.text, {
          headers: { ...JSON_HEADERS, ...headers, ...cacheHeaders, ...serverTimingHeaders(timing) },
        });
      }
      // The first event is awaited inside the loop: a stream that fails at once still fails over.
      const { value: upstream } = await this.route(call, signal, async (args) =>
        awaitFirstEvent(
          await call.served.adapter.stream(args),
          call.served.model.id,
          this.idleMs(call),
          args.wire !== undefined,
        ),
      );
      call.idFromUpstream = passthroughRulesFor(format, upstream)?.keepsUpstreamId ?? false;
      /** Passed through: the response object exactly as the client saw it, stored as such. */
      let final: Record<string, unknown> | undefined;
      const tap = new FirstTokenTap(
        call.watch,
        call.served.model.id,
        () => estimateInputTokens(call.decoded.request, call.uncounted),
        (outcome) => {
          // A failed response passed through to a Responses client is its answer, settled as
          // completed, but not one to serve again from the cache.
          if (capture)
            capture.completed = outcome.status === 'completed' && outcome.response.finishReason.unified !== 'error';
          releaseConnection();
          return this.settle(call, outcome);
        },
        call.decoded.responses?.store ? (response) => storeResponse(this.ctx.db, call, response, final) : undefined,
      );
      const headers = {
        ...SSE_HEADERS,
        ...warningHeaders([...decodedFor(call).warnings, ...upstream.warnings]),
        ...servedHeaders(call),
        // A stream's charge is known only at its end: the most it can cost.
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
      // The client left while an upstream worked on the call (before its first byte), and that
      // is what ended the attempt (not an upstream's own refusal that came just before).
      if (err instanceof RouteFailure && request.signal.aborted && endedByAbort(err.cause, signal))
        throw this.clientGone(call);
      throw this.failure(call, err);
    }
  }

  /**
   * The client went away while an upstream had the call: the upstream read its input, and bills
   * it, so the input is charged (estimated, as the key's tpm counts it) with nothing produced,
   * as for a client that leaves a stream mid-way (docs/money.md). Recorded completed, ended by
   * the client; nobody reads the error.
   */
  private clientGone(call: Call): LlmError {
    const inputTokens = estimateInputTokens(call.decoded.request, call.uncounted);
    const response: CanonicalResponse = {
      id: call.encode.id,
      model: call.served.model.id,
      created: call.encode.created,
      content: [],
      finishReason: { unified: 'other', raw: 'client_disconnected' },
      usage: { inputTokens, outputTokens: 0, totalTokens: inputTokens },
    };
    void recordCall(this.deps, call, 'completed', response, undefined, 'client_disconnected');
    return new LlmError(call.format.family, 'invalid_request', 'the client went away before the answer');
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
      call.decoded,
      // The models, not the deployments: their order is the routing's choice, call by call.
      [...new Set(call.plan.map((d) => d.entry.object.id))].sort(),
      call.wire?.body,
    );
    const hit = await this.cache.get(key);
    if (!hit) return { ttlS, key };
    const servedBy = call.plan.find(
      (d) =>
        d.entry.object.id === hit.headers['x-gateway-model'] && d.provider.id === hit.headers['x-gateway-provider'],
    );
    if (servedBy) call.served = serve(this.adapters, servedBy);
    await recordCall(this.deps, call, 'completed', undefined, undefined, 'cache_hit');
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
          call.served = serve(this.adapters, deployment);
          call.encode.model = call.served.model.id;
          call.watch.serving(watchLabels(call.served));
          // The client's own body goes only to an upstream of its format; a deployment of another
          // format gets the whole request decoded and translated.
          const wire = wireFor(call);
          const request = decodedFor(call).request;
          const headers = forwardedHeaders(call.served.adapter, call.format, call.requestHeaders);
          return call.watch.upstream(() =>
            step({ request, model: call.served.model, signal, onAttempt, wire, headers }),
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

  private idleMs(call: Call): number {
    return call.served.deployment.provider.stream_idle_timeout_ms ?? DEFAULT_STREAM_IDLE_MS;
  }

  /** Resolves once the stream's charge is committed; the stream's last event waits for it. */
  private settle(call: Call, outcome: StreamOutcome): Promise<void> {
    if (outcome.status === 'failed') {
      // A stream that broke after its first byte cannot fail over, but it counts against the deployment.
      void this.router.health.failed(call.served.deployment, outcome.message);
      return recordCall(this.deps, call, 'failed', outcome.response, outcome.message);
    }
    return recordCall(
      this.deps,
      call,
      'completed',
      outcome.response,
      undefined,
      outcome.status === 'cancelled' ? 'client_disconnected' : undefined,
    );
  }

  /**
   * The upstream answered and the gateway could not finish the answer (encode it, store the
   * Responses conversation): the call fails, charged for the upstream's work, as a stream that
   * breaks after its usage came is.
   */
  private async chargedFailure(call: Call, response: CanonicalResponse, err: unknown): Promise<RecordedFailure> {
    const message = (err as Error).message ?? String(err);
    this.ctx.log.error('llm answer failed after the upstream answered', {
      model: call.served.model.id,
      ...errorFields(err),
    });
    await recordCall(this.deps, call, 'failed', response, message);
    return new RecordedFailure(message);
  }

  private failure(call: Call, cause: unknown): LlmError {
    const routed = cause instanceof RouteFailure;
    const err = routed ? cause.cause : cause;
    const failed = this.classified(call, err);
    if (routed) Object.assign(failed.headers, servedHeaders(call));
    return failed;
  }

  private classified(call: Call, err: unknown): LlmError {
    const family = call.format.family;
    if (err instanceof RecordedFailure) return new LlmError(family, 'internal', 'internal error');
    if (err instanceof UpstreamError) {
      void recordCall(this.deps, call, 'failed', undefined, err.message);
      const failed = new LlmError(
        family,
        kindForStatus(err.status),
        err.message,
        null,
        `upstream_${err.kind}`,
        err.status,
      );
      // The upstream's own hint, for the SDKs' retry logic (both honour `retry-after`).
      if (err.status === 429 && err.retryAfterSeconds !== undefined)
        failed.headers['retry-after'] = String(Math.max(1, Math.ceil(err.retryAfterSeconds)));
      return failed;
    }
    if (err instanceof UntranslatableBody) return this.classified(call, err.refusal);
    if (err instanceof LlmError || err instanceof InvalidRequestError) {
      if (call.reservationId) this.reservations.release(call.reservationId);
      call.watch.settled('failed', undefined, 0);
      if (call.keyTicket) this.keyGate?.release(call.keyTicket);
      return err instanceof LlmError ? err : new LlmError(family, 'invalid_request', err.message, err.param ?? null);
    }
    this.ctx.log.error('llm call failed', { model: call.served.model.id, ...errorFields(err) });
    void recordCall(this.deps, call, 'failed', undefined, (err as Error).message ?? String(err));
    return new LlmError(family, 'internal', 'internal error');
  }
}

/** Whether `cause` is the abort of `signal` (its reason, or an AbortError), not an upstream's answer. */
function endedByAbort(cause: unknown, signal: AbortSignal): boolean {
  if (!signal.aborted) return false;
  if (cause === signal.reason) return true;
  const name = (cause as { name?: unknown } | null)?.name;
  return name === 'AbortError' || (cause instanceof Error && cause.message === (signal.reason as Error)?.message);
}

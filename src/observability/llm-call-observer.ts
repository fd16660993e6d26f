import type { CanonicalResponse } from '../../translators/canonical/index.ts';
import { type ObservedAttempt, withUpstreamScope } from '../../providers/common/upstream-observer.ts';
import { observationOf, type RequestObservation } from './http-observer.ts';
import {
  costUsd,
  llmGatewayOverhead,
  llmRequests,
  llmTimeToFirstToken,
  llmTokens,
  upstreamRequestDuration,
} from './metrics.ts';
import type { CallTiming } from './server-timing.ts';
import { type Span, tracing } from './tracing.ts';

export interface LlmCallLabels {
  /** Catalog id (`acme/chat-large`): bounded by the catalog, never the client's free text. */
  model: string;
  upstreamModel: string;
  /** Configured provider id, and its kind (the GenAI `gen_ai.provider.name`). */
  provider: string;
  providerKind: string;
  clientFormat: string;
  stream: boolean;
}

export type LlmCallOutcome = 'completed' | 'failed' | 'cancelled';

/**
 * The metrics and spans of one LLM call, from the upstream attempts to its settlement. Each
 * upstream attempt is a client span `chat <model>` under the request's server span, with the
 * request id and `traceparent` sent along; the answering attempt's span stays open until the call
 * settles, so it carries the response model, usage and finish reason. Time spent waiting on the
 * adapter is the upstream's; the rest of the time to the answer is the gateway's overhead.
 */
export class LlmCallWatch {
  private readonly obs: RequestObservation | undefined;
  private upstreamStart = 0;
  private upstreamSeconds = 0;
  private attempted = false;
  private answering: Span | undefined;
  private firstTokenSeen = false;
  private settledOnce = false;

  constructor(
    request: Request,
    private labels: LlmCallLabels,
  ) {
    this.obs = observationOf(request);
  }

  /** The deployment about to be tried (routing may move a call to another model or provider). */
  serving(deployment: Pick<LlmCallLabels, 'model' | 'upstreamModel' | 'provider' | 'providerKind'>): void {
    this.labels = { ...this.labels, ...deployment };
  }

  /** The request's `x-request-id` (undefined only when the request did not come through serve.ts). */
  get requestId(): string | undefined {
    return this.obs?.requestId;
  }

  /** Runs the adapter call (`generate` or `stream`) with its attempts observed. */
  async upstream<T>(run: () => Promise<T>): Promise<T> {
    this.upstreamStart = performance.now();
    try {
      return await withUpstreamScope({ attempt: () => this.attempt() }, run);
    } finally {
      // Summed over failover steps: all of it was the upstreams' time.
      this.upstreamSeconds += (performance.now() - this.upstreamStart) / 1000;
    }
  }

  private attempt(): ObservedAttempt {
    this.attempted = true;
    const started = performance.now();
    const t = tracing();
    const span = t?.childSpan(`chat ${this.labels.model}`, 'client', this.obs?.span, this.requestAttributes());
    const headers: Record<string, string> = this.obs ? { 'x-request-id': this.obs.requestId } : {};
    if (span && t) Object.assign(headers, t.propagation(span));
    return {
      headers,
      end: (result) => {
        upstreamRequestDuration.observe({ provider: this.labels.provider }, (performance.now() - started) / 1000);
        if (!span || !t) return;
        if ('error' in result) {
          t.fail(span, result.error);
          span.end();
          return;
        }
        span.setAttribute('http.response.status_code', result.status);
        if (result.status >= 400) {
          t.fail(span, String(result.status));
          span.end();
        } else this.answering = span;
      },
    };
  }

  private requestAttributes() {
    return {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': this.labels.providerKind,
      'gen_ai.request.model': this.labels.upstreamModel,
      'gateway.model': this.labels.model,
      'gateway.provider': this.labels.provider,
    };
  }

  /**
   * The response (or a stream's headers) is about to go out: what the gateway itself took so far,
   * and where the time went (server-timing.ts), `settleMs` being the wait for the charge's commit.
   */
  answered(settleMs?: number): CallTiming | undefined {
    if (!this.obs) return undefined;
    const totalMs = performance.now() - this.obs.startedAt;
    const upstreamMs = this.upstreamSeconds * 1000;
    llmGatewayOverhead.observe(
      { client_format: this.labels.clientFormat, stream: String(this.labels.stream) },
      Math.max(0, totalMs - upstreamMs) / 1000,
    );
    if (this.labels.stream && this.obs.span) this.obs.spanEndsWithStream = true;
    return { totalMs, upstreamMs, settleMs };
  }

  /** A content delta is going to the client; the first one times the call's first token. */
  firstToken(): void {
    if (this.firstTokenSeen || !this.obs) return;
    this.firstTokenSeen = true;
    llmTimeToFirstToken.observe(
      { model: this.labels.model, provider: this.labels.provider },
      (performance.now() - this.obs.startedAt) / 1000,
    );
  }

  /** The call is recorded: count it, its tokens and cost, and end its spans. */
  settled(outcome: LlmCallOutcome, response: CanonicalResponse | undefined, cost: number, error?: string): void {
    if (this.settledOnce) return;
    this.settledOnce = true;
    const { model, provider, clientFormat } = this.labels;
    llmRequests.inc({ model, provider, client_format: clientFormat, outcome });
    const usage = response?.usage;
    if (usage) {
      llmTokens.inc({ model, provider, type: 'input' }, usage.inputTokens);
      llmTokens.inc({ model, provider, type: 'output' }, usage.outputTokens);
      if (usage.cachedInputTokens) llmTokens.inc({ model, provider, type: 'cache_read' }, usage.cachedInputTokens);
    }
    if (cost > 0) costUsd.inc({ model, category: 'llm' }, cost);
    this.endSpans(outcome, response, error);
  }

  private endSpans(outcome: LlmCallOutcome, response: CanonicalResponse | undefined, error?: string): void {
    const t = tracing();
    if (!t) return;
    let span = this.answering;
    // An adapter that made no HTTP attempt (the offline sandbox) still gets its client span.
    if (!span && !this.attempted)
      span = t.childSpan(
        `chat ${this.labels.model}`,
        'client',
        this.obs?.span,
        this.requestAttributes(),
        performance.timeOrigin + this.upstreamStart,
      );
    if (span) {
      if (response) {
        span.setAttribute('gen_ai.response.model', response.model || this.labels.upstreamModel);
        if (response.id) span.setAttribute('gen_ai.response.id', response.id);
        span.setAttribute('gen_ai.usage.input_tokens', response.usage.inputTokens);
        span.setAttribute('gen_ai.usage.output_tokens', response.usage.outputTokens);
        span.setAttribute('gen_ai.response.finish_reasons', [
          response.finishReason.raw ?? response.finishReason.unified,
        ]);
      }
      span.setAttribute('gateway.outcome', outcome);
      if (outcome === 'failed') t.fail(span, error ? 'upstream_error' : 'failed');
      span.end();
    }
    const server = this.obs?.span;
    if (server && this.obs?.spanEndsWithStream) server.end();
  }
}

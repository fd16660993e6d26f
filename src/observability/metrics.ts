import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { CellCounter, CellHistogram } from './cell-metrics.ts';
import { EventLoopLag } from './event-loop-lag.ts';
import { EVENT_LOOP_LAG_NAMES, registerEventLoopLag } from './event-loop-lag-gauges.ts';

/**
 * Buckets for work the gateway does itself (routing, auth, a cached read): the first bucket is
 * 100 µs, so a sub-millisecond request lands in a bucket of its own instead of "under 5 ms".
 */
const FAST_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];
/** Buckets for anything that may wait on a model: from 1 ms up to ten minutes. */
const SLOW_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];
/** A request's total time spans both: the fast buckets, then the slow ones above a second. */
const REQUEST_BUCKETS = [...FAST_BUCKETS, 2.5, 5, 10, 30, 60, 120, 300, 600];

/**
 * Every metric of `GET /metrics` (docs/observability.md), in one registry of its own. Labels carry
 * route templates, model and provider ids, formats and outcomes, never an account, key or task
 * id: their values come from the catalog and fixed lists, so the series count stays bounded.
 * Updates are in-memory increments; only the queue depth is read (from the database) at scrape.
 * Counters and histograms are cell-metrics.ts's (one cell per label set, cheap on the call path),
 * exposed through this prom-client registry like its own.
 */
export const registry = new Registry();
/**
 * prom-client's default process metrics, but for its event-loop lag: its sampler is a timer that
 * never stops (event-loop-lag.ts says why ours rests). `collectDefaultMetrics` cannot leave a
 * metric out, so its sampler is given the longest period a timer takes (about 24.8 days, so it
 * never wakes the process) and its series are replaced by ours under the same names.
 * @see https://nodejs.org/api/perf_hooks.html#perf_hooksmonitoreventloopdelayoptions
 */
collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 2 ** 31 - 1 });
for (const name of EVENT_LOOP_LAG_NAMES) registry.removeSingleMetric(name);
/** Marked busy by every request (http-observer.ts); rests when none arrive. */
export const eventLoopLag = new EventLoopLag();
registerEventLoopLag(registry, eventLoopLag);

const inRegistry = { registers: [registry] };

export const httpRequests = new CellCounter({
  name: 'gateway_http_requests_total',
  help: 'HTTP requests answered, by method, route template and status code.',
  labelNames: ['method', 'route', 'status'] as const,
  ...inRegistry,
});

export const httpRequestDuration = new CellHistogram({
  name: 'gateway_http_request_duration_seconds',
  help: 'Time from request arrival to the response headers, by method and route template.',
  labelNames: ['method', 'route'] as const,
  buckets: REQUEST_BUCKETS,
  ...inRegistry,
});

export const llmRequests = new CellCounter({
  name: 'gateway_llm_requests_total',
  help: 'LLM calls by model, provider, client wire format and outcome (completed, failed, cancelled).',
  labelNames: ['model', 'provider', 'client_format', 'outcome'] as const,
  ...inRegistry,
});

export const llmTokens = new CellCounter({
  name: 'gateway_llm_tokens_total',
  help: 'Tokens billed, by model, provider and type (input, output, cache_read, cache_write).',
  labelNames: ['model', 'provider', 'type'] as const,
  ...inRegistry,
});

export const llmTimeToFirstToken = new CellHistogram({
  name: 'gateway_llm_time_to_first_token_seconds',
  help: 'Streamed LLM calls: time from request arrival to the first content delta sent to the client.',
  labelNames: ['model', 'provider'] as const,
  buckets: SLOW_BUCKETS,
  ...inRegistry,
});

export const llmGatewayOverhead = new CellHistogram({
  name: 'gateway_llm_overhead_seconds',
  help: 'LLM calls: time the gateway spent itself, outside upstream attempts (see docs/observability.md).',
  labelNames: ['client_format', 'stream'] as const,
  buckets: FAST_BUCKETS,
  ...inRegistry,
});

export const upstreamRequestDuration = new CellHistogram({
  name: 'gateway_upstream_request_duration_seconds',
  help: 'One upstream attempt: time from sending the request to its response headers (or failure).',
  labelNames: ['provider'] as const,
  buckets: SLOW_BUCKETS,
  ...inRegistry,
});

export const costUsd = new CellCounter({
  name: 'gateway_cost_usd_total',
  help: 'USD charged to accounts, by model and category (llm, image, video, audio).',
  labelNames: ['model', 'category'] as const,
  ...inRegistry,
});

export const tasks = new CellCounter({
  name: 'gateway_tasks_total',
  help: 'Media tasks finished, by model and status (completed, failed).',
  labelNames: ['model', 'status'] as const,
  ...inRegistry,
});

let readQueueDepth: (() => Promise<number>) | undefined;

export const taskQueueDepth = new Gauge({
  name: 'gateway_task_queue_depth',
  help: 'Media tasks still processing (queued or running), across all instances; read at scrape.',
  ...inRegistry,
  // Every worker reads the same count: merged across workers it is one value, not a sum.
  aggregator: 'max',
  async collect() {
    if (!readQueueDepth) return;
    // A failed read keeps the last value: a scrape must not fail because the database blinked.
    const depth = await readQueueDepth().catch(() => undefined);
    if (depth !== undefined) this.set(depth);
  },
});

/** The gauge reads the queue depth at scrape time (one count query per scrape, none per request). */
export function readTaskQueueDepthWith(reader: () => Promise<number>): void {
  readQueueDepth = reader;
}

interface SettlementReading {
  unsettled: number;
  journal: boolean;
  /** What the journal's segment files take on disk (0 without one). */
  journalFileBytes: number;
}

let readSettlements: (() => SettlementReading) | undefined;

/** A gauge that reads one figure of the usage recorder at scrape time (none before it is wired). */
function settlementGauge(name: string, help: string, figure: (r: SettlementReading) => number): Gauge {
  return new Gauge({
    name,
    help,
    ...inRegistry,
    collect() {
      if (readSettlements) this.set(figure(readSettlements()));
    },
  });
}

export const unsettledCalls = settlementGauge(
  'gateway_llm_unsettled_calls',
  'LLM calls answered from the settlement journal whose database settlement has not committed yet.',
  (r) => r.unsettled,
);

export const settlementJournal = settlementGauge(
  'gateway_settlement_journal_up',
  'Processes answering LLM calls from the settlement journal (0: off, or turned off by a failed append).',
  (r) => (r.journal ? 1 : 0),
);

export const settlementJournalBytes = settlementGauge(
  'gateway_settlement_journal_file_bytes',
  'Bytes the settlement journal files take on disk; grows past twice the segment size only while the database falls behind.',
  (r) => r.journalFileBytes,
);

/** The settlement gauges read the usage recorder at scrape time. */
export function readSettlementsWith(reader: () => SettlementReading): void {
  readSettlements = reader;
}

export const webhookDeliveries = new CellCounter({
  name: 'gateway_webhook_deliveries_total',
  help: 'Webhook delivery attempts, by outcome (delivered, failed: a non-2xx answer, error: no answer).',
  labelNames: ['outcome'] as const,
  ...inRegistry,
});

export const fallbacks = new CellCounter({
  name: 'gateway_fallbacks_total',
  help: 'Calls moved from one model to another after a failure, by the model left and the model tried.',
  labelNames: ['from_model', 'to_model'] as const,
  ...inRegistry,
});

/** Routing calls this when it falls back from one model to another. */
export function recordFallback(fromModel: string, toModel: string): void {
  fallbacks.inc({ from_model: fromModel, to_model: toModel });
}

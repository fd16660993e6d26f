import { join } from 'node:path';
import * as v from 'valibot';
import { ConfigError } from './config-error.ts';
import { formatIssues } from '../http/validation.ts';
import { readWorkerIndex, resolveWorkers } from '../cluster/worker-role.ts';
import { SEGMENT_BYTES } from '../llm/settlement-journal.ts';

const boolString = v.pipe(
  v.picklist(['true', 'false', '1', '0', 'yes', 'no']),
  v.transform((s) => s === 'true' || s === '1' || s === 'yes'),
);
const port = v.pipe(
  v.string(),
  v.regex(/^\d+$/, 'expected an integer'),
  v.transform(Number),
  v.integer(),
  v.minValue(0),
  v.maxValue(65535),
);
const positiveInt = v.pipe(
  v.string(),
  v.regex(/^\d+$/, 'expected a positive integer'),
  v.transform(Number),
  v.minValue(1),
);
/** Milliseconds a timer waits: at most a day (Bun's timers fire at once past 2^31 − 1 ms). */
const timerMs = v.pipe(positiveInt, v.maxValue(86_400_000, 'expected at most 86400000 (a day)'));
/**
 * A bearer token: surrounding whitespace (a secret file's trailing newline) is trimmed, and one
 * with whitespace inside is refused, since no `Authorization: Bearer` header could carry it.
 */
const token = v.pipe(
  v.string(),
  v.trim(),
  v.minLength(16, 'must be at least 16 characters'),
  v.regex(/^\S+$/, 'must not contain whitespace (no Authorization header could carry it)'),
);
const url = v.pipe(v.string(), v.url('expected an absolute URL'));
const delays = v.pipe(
  v.string(),
  v.regex(/^\s*\d+(\s*,\s*\d+)*\s*$/, 'expected comma-separated seconds, e.g. 300,600,1800,3600'),
  v.transform((s) => s.split(',').map((n) => Number(n.trim()))),
  v.check((list) => list.every((n) => n <= 604_800), 'each delay must be at most 604800 seconds (a week)'),
);

/** Every environment variable of docs/api-contract.md, plus a few operational knobs. */
const EnvSchema = v.object({
  PORT: v.optional(port, '8080'),
  HOST: v.optional(v.pipe(v.string(), v.minLength(1)), '127.0.0.1'),
  PUBLIC_URL: v.optional(url),
  UPLOAD_URL: v.optional(url),
  DATABASE_URL: v.optional(v.pipe(v.string(), v.regex(/^postgres(ql)?:\/\//, 'expected a postgres:// URL'))),
  REDIS_URL: v.optional(v.pipe(v.string(), v.regex(/^rediss?:\/\//, 'expected a redis:// URL'))),
  REDIS_KEY_PREFIX: v.optional(v.pipe(v.string(), v.minLength(1)), 'gw:'),
  DATA_DIR: v.optional(v.pipe(v.string(), v.minLength(1)), './data'),
  GATEWAY_CONFIG: v.optional(v.pipe(v.string(), v.minLength(1))),
  ADMIN_TOKEN: v.optional(token),
  WEBHOOK_RETRY_DELAYS: v.optional(delays, '300,600,1800,3600'),
  ALLOW_PRIVATE_URLS: v.optional(boolString, 'false'),
  RATE_LIMIT_PER_MINUTE: v.optional(positiveInt, '600'),
  RATE_LIMIT_PER_ACCOUNT_PER_MINUTE: v.optional(positiveInt),
  INITIAL_BALANCE_USD: v.optional(
    v.pipe(
      v.string(),
      v.decimal('expected a decimal number'),
      v.transform(Number),
      v.minValue(0, 'must be at least 0'),
      v.maxValue(1_000_000_000, 'must be at most 1000000000'),
    ),
    '10',
  ),
  LOG_LEVEL: v.optional(v.picklist(['debug', 'info', 'warn', 'error', 'silent']), 'info'),
  INSTANCE_ID: v.optional(v.string()),
  TASK_CONCURRENCY: v.optional(positiveInt, '16'),
  MAX_UPLOAD_BYTES: v.optional(positiveInt, String(2 * 1024 ** 3)),
  S3_BUCKET: v.optional(v.pipe(v.string(), v.minLength(1))),
  S3_ENDPOINT: v.optional(url),
  S3_REGION: v.optional(v.string()),
  S3_ACCESS_KEY_ID: v.optional(v.string()),
  S3_SECRET_ACCESS_KEY: v.optional(v.string()),
  BODY_TIMEOUT_MS: v.optional(timerMs, '30000'),
  CLIENT_IDLE_TIMEOUT_S: v.optional(v.pipe(positiveInt, v.maxValue(255, "expected at most 255 (Bun's limit)")), '255'),
  UPSTREAM_HTTP_CLIENT: v.optional(v.picklist(['socket', 'fetch']), 'socket'),
  AUTH_FAILURES_PER_MINUTE: v.optional(positiveInt, '20'),
  TRUST_PROXY: v.optional(boolString, 'false'),
  METRICS_TOKEN: v.optional(token),
  TASK_EVENTS_HEARTBEAT_MS: v.optional(timerMs, '15000'),
  TASK_EVENTS_MAX_STREAMS_PER_ACCOUNT: v.optional(positiveInt, '1000'),
  WORKERS: v.optional(v.pipe(positiveInt, v.maxValue(256, 'expected at most 256'))),
  DATABASE_POOL_SIZE: v.optional(v.pipe(positiveInt, v.maxValue(1000, 'expected at most 1000')), '20'),
  SETTLEMENT_JOURNAL: v.optional(boolString),
  SETTLEMENT_JOURNAL_DIR: v.optional(v.pipe(v.string(), v.minLength(1))),
  SETTLEMENT_JOURNAL_MAX_UNSETTLED: v.optional(positiveInt, '20000'),
  SETTLEMENT_JOURNAL_SEGMENT_BYTES: v.optional(
    v.pipe(positiveInt, v.minValue(65_536, 'must be at least 65536')),
    String(SEGMENT_BYTES),
  ),
});

export type EnvInput = v.InferInput<typeof EnvSchema>;

export interface Env {
  port: number;
  host: string;
  publicUrl: string;
  uploadUrl: string;
  databaseUrl?: string;
  redisUrl?: string;
  redisKeyPrefix: string;
  dataDir: string;
  gatewayConfigPath?: string;
  adminToken?: string;
  webhookRetryDelays: number[];
  allowPrivateUrls: boolean;
  rateLimitPerMinute: number;
  /** Requests per account (all its keys) per minute; unset: ten times the per-key limit. */
  rateLimitPerAccountPerMinute?: number;
  initialBalanceUsd: number;
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  instanceId: string;
  /** Media tasks one instance runs at once. */
  taskConcurrency: number;
  /** Largest single file accepted or fetched (uploads, task outputs, voice samples). */
  maxUploadBytes: number;
  /** Set when `S3_BUCKET` is: files go to any S3-compatible store instead of `DATA_DIR/files`. */
  s3?: { bucket: string; endpoint?: string; region?: string; accessKeyId?: string; secretAccessKey?: string };
  /** How long a request body (JSON endpoints) may take to arrive in full. */
  bodyTimeoutMs: number;
  /**
   * Seconds a client connection may stay silent before it is closed (Bun's `idleTimeout`), except
   * while an LLM call waits on its upstream (src/http/client-idle.ts).
   */
  clientIdleTimeoutS: number;
  /** The HTTP client upstream calls go through (providers/common/upstream-transport.ts). */
  upstreamHttpClient: 'socket' | 'fetch';
  /** Failed authentications one client address may make per minute before it gets 429s. */
  authFailuresPerMinute: number;
  /** Take the client address from the last `X-Forwarded-For` entry (behind a reverse proxy only). */
  trustProxy: boolean;
  /** Bearer token `GET /metrics` requires; unset → the endpoint is open. */
  metricsToken?: string;
  /** How often a task's event stream sends a heartbeat comment (and re-reads the task). */
  taskEventsHeartbeatMs: number;
  /** Task event streams one account may hold open on one instance (src/tasks/open-streams.ts). */
  taskEventsMaxStreamsPerAccount: number;
  /** Processes serving the port, this one included (docs/scaling.md). */
  workers: number;
  /** 0 in the primary process, 1 … workers-1 in the processes it spawned. */
  workerIndex: number;
  /** Postgres connections one process may open (each worker has its own pool). */
  databasePoolSize: number;
  /** Answer LLM calls once their charge is journaled in `DATA_DIR/journal` (docs/money.md). */
  settlementJournal: boolean;
  /** Where the journal's files are: `DATA_DIR/journal` unless set (a disk of this host's own). */
  settlementJournalDir: string;
  /** When the journal moves to its other segment (docs/money.md). */
  settlementJournalSegmentBytes: number;
  /** Journaled calls waiting for the database past which calls wait for it themselves. */
  settlementJournalMaxUnsettled: number;
}

/** Reads the environment once at start; a bad value stops the process with the variable named. */
export function loadEnv(source: Record<string, string | undefined> = process.env): Env {
  const picked: Record<string, string> = {};
  for (const key of Object.keys(EnvSchema.entries)) {
    const value = source[key];
    if (value !== undefined && value !== '') picked[key] = value;
  }
  const result = v.safeParse(EnvSchema, picked);
  if (!result.success) throw new ConfigError(`invalid environment: ${formatIssues(result.issues)}`);
  const e = result.output;
  const workers = resolveWorkers(e.WORKERS, { databaseUrl: e.DATABASE_URL, redisUrl: e.REDIS_URL });
  const workerIndex = readWorkerIndex(source);
  if (workerIndex >= workers) {
    // Only a primary running `workers` processes spawns slot `workerIndex`: this one was not.
    throw new ConfigError(
      `invalid environment: GATEWAY_WORKER_INDEX is set by the primary process only; unset it (WORKERS=${workers})`,
    );
  }
  const publicUrl = (e.PUBLIC_URL ?? `http://${e.HOST}:${e.PORT}`).replace(/\/+$/, '');
  return {
    port: e.PORT,
    host: e.HOST,
    publicUrl,
    uploadUrl: (e.UPLOAD_URL ?? publicUrl).replace(/\/+$/, ''),
    databaseUrl: e.DATABASE_URL,
    redisUrl: e.REDIS_URL,
    redisKeyPrefix: e.REDIS_KEY_PREFIX,
    dataDir: e.DATA_DIR,
    gatewayConfigPath: e.GATEWAY_CONFIG,
    adminToken: e.ADMIN_TOKEN,
    webhookRetryDelays: e.WEBHOOK_RETRY_DELAYS,
    allowPrivateUrls: e.ALLOW_PRIVATE_URLS,
    rateLimitPerMinute: e.RATE_LIMIT_PER_MINUTE,
    rateLimitPerAccountPerMinute: e.RATE_LIMIT_PER_ACCOUNT_PER_MINUTE,
    initialBalanceUsd: e.INITIAL_BALANCE_USD,
    logLevel: e.LOG_LEVEL,
    // Workers of one primary share its INSTANCE_ID; each claims tasks and deliveries under its own.
    // The random end makes it this process's alone: two hosts given one INSTANCE_ID (a replica
    // template's) would otherwise take each other's task and delivery leases for their own.
    instanceId: `${e.INSTANCE_ID ?? process.pid}${workerIndex > 0 ? `-w${workerIndex}` : ''}-${crypto.randomUUID().slice(0, 8)}`,
    taskConcurrency: e.TASK_CONCURRENCY,
    maxUploadBytes: e.MAX_UPLOAD_BYTES,
    s3: e.S3_BUCKET
      ? {
          bucket: e.S3_BUCKET,
          endpoint: e.S3_ENDPOINT,
          region: e.S3_REGION,
          accessKeyId: e.S3_ACCESS_KEY_ID,
          secretAccessKey: e.S3_SECRET_ACCESS_KEY,
        }
      : undefined,
    bodyTimeoutMs: e.BODY_TIMEOUT_MS,
    clientIdleTimeoutS: e.CLIENT_IDLE_TIMEOUT_S,
    upstreamHttpClient: e.UPSTREAM_HTTP_CLIENT,
    authFailuresPerMinute: e.AUTH_FAILURES_PER_MINUTE,
    trustProxy: e.TRUST_PROXY,
    metricsToken: e.METRICS_TOKEN,
    taskEventsHeartbeatMs: e.TASK_EVENTS_HEARTBEAT_MS,
    taskEventsMaxStreamsPerAccount: e.TASK_EVENTS_MAX_STREAMS_PER_ACCOUNT,
    workers,
    workerIndex,
    databasePoolSize: e.DATABASE_POOL_SIZE,
    // On by default where the database lives in DATA_DIR too (the embedded default): there the
    // journal is exactly as durable as the database, and cheaper (docs/money.md).
    settlementJournal: e.SETTLEMENT_JOURNAL ?? e.DATABASE_URL === undefined,
    settlementJournalDir: e.SETTLEMENT_JOURNAL_DIR ?? join(e.DATA_DIR, 'journal'),
    settlementJournalSegmentBytes: e.SETTLEMENT_JOURNAL_SEGMENT_BYTES,
    settlementJournalMaxUnsettled: e.SETTLEMENT_JOURNAL_MAX_UNSETTLED,
  };
}

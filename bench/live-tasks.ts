/**
 * Live task status across two instances sharing Postgres and Redis: how long after a cancel on
 * instance B its `event: status` reaches streams on A and on B, for one stream per instance
 * (repeated) and for many streams of one task at once; and the RSS the open streams cost.
 * The heartbeat (which also re-reads the task) is set out of reach, so only the pub/sub path counts.
 *
 *   BUN_CONFIG_MAX_HTTP_REQUESTS=4096 bun run bench/live-tasks.ts [--rounds 50] [--streams 1000]
 *
 * (The variable lifts Bun's cap of 256 fetches at once in this client process: every stream is one.)
 */
import { api, createAccount, uniqueEmail } from '../tests/helpers/api.ts';
import { startGateway, type GatewayProcess } from '../tests/helpers/gateway-process.ts';
import { REDIS_URL, createTestDatabase } from '../tests/helpers/services.ts';
import { openTaskEvents, type TaskEventsClient } from '../tests/helpers/task-events.ts';
import { rssKb } from './lib/rss-sampler.ts';
import { table } from './lib/wrk.ts';
import { numberArg } from './lib/cli-args.ts';

const rounds = numberArg('--rounds', 50);
const streamCount = numberArg('--streams', 1000);

const databaseUrl = await createTestDatabase('benchlive');
const env = {
  DATABASE_URL: databaseUrl,
  REDIS_URL,
  REDIS_KEY_PREFIX: `${new URL(databaseUrl).pathname.slice(1)}:`,
  LOG_LEVEL: 'warn',
  RATE_LIMIT_PER_MINUTE: '100000000',
  TASK_EVENTS_HEARTBEAT_MS: '600000',
};
const [a, b] = (await Promise.all([startGateway(env), startGateway(env)])) as [GatewayProcess, GatewayProcess];
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
const rows: Array<Record<string, string | number>> = [];

/** Creates a long task, opens `perInstance` streams on each instance, cancels on B; ms until each stream saw it. */
async function round(key: string, perInstance: number): Promise<number[]> {
  const created = await api(a, 'POST', '/v1/tasks', {
    key,
    body: { model: 'sandbox/image', input: { prompt: 'bench', delay_ms: 60_000 } },
  });
  const id = created.body.data.task_id as string;
  const streams: TaskEventsClient[] = [];
  for (let i = 0; i < perInstance; i += 100)
    streams.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(100, perInstance - i) }, (_, j) => openTaskEvents(j % 2 ? a : b, key, id)),
      )),
    );
  await Promise.all(streams.map((s) => s.waitFor((r) => r.length === 1)));
  const seen: number[] = [];
  const t0 = performance.now();
  const done = Promise.all(
    streams.map(async (s) => {
      await s.waitFor((r) => r.length === 2, 30_000);
      seen.push(performance.now() - t0);
    }),
  );
  const res = await api(b, 'POST', `/v1/tasks/${id}/cancel`, { key });
  if (res.status !== 200) throw new Error(`cancel: ${res.status}`);
  await done;
  await Promise.all(streams.map((s) => s.ended));
  return seen;
}

try {
  const { key } = await createAccount(a, uniqueEmail('benchlive'), 1000);
  const single: number[] = [];
  for (let i = 0; i < rounds; i++) single.push(...(await round(key, 2)));
  single.sort((x, y) => x - y);
  rows.push({
    case: `1 stream on A + 1 on B, ${rounds} cancels on B`,
    events: single.length,
    'p50 ms': pct(single, 0.5).toFixed(1),
    'p99 ms': pct(single, 0.99).toFixed(1),
    'max ms': (single.at(-1) ?? 0).toFixed(1),
  });

  const before = (await rssKb(a.proc.pid)) + (await rssKb(b.proc.pid));
  const many = (await round(key, streamCount)).sort((x, y) => x - y);
  const after = (await rssKb(a.proc.pid)) + (await rssKb(b.proc.pid));
  rows.push({
    case: `${streamCount} streams of one task (half per instance), one cancel on B`,
    events: many.length,
    'p50 ms': pct(many, 0.5).toFixed(1),
    'p99 ms': pct(many, 0.99).toFixed(1),
    'max ms': (many.at(-1) ?? 0).toFixed(1),
  });
  process.stdout.write(`${table(rows)}\n`);
  process.stdout.write(
    `RSS of both instances after the ${streamCount} streams: +${Math.round((after - before) / 1024)} MB\n`,
  );
} finally {
  await Promise.all([a.stop(), b.stop()]);
}

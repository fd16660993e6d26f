/**
 * The gateway's own work per request, without sockets: the app and its request handler
 * (src/app/serve.ts `requestHandler`, what Bun.serve calls) built as `npm start` builds them, on
 * a fresh Postgres database and Redis prefix, and handed `Request` objects directly, `--concurrency`
 * at a time. CPU per request is the whole process's (every thread: the JIT, the collector, Bun's
 * HTTP client for the relayed cases) and the main thread's, over `--requests` per case and round.
 * What it leaves out is what Bun does with sockets (accepting, parsing, writing), so its figures
 * move less with this VM's regime than the closed-loop ones do, and `--profile` can say which
 * function a change made cheaper. Prints Markdown tables (figures, not a test).
 *
 *   bun run bench/in-process.ts [--cases account,refused,echo,echo-stream,relayed,relayed-stream,relayed-paced]
 *                               [--requests 20000] [--warmup 5000] [--rounds 3] [--concurrency 16]
 *                               [--messages N] [--profile [--top 25]]
 *
 * Cases: `account` (GET /v1/account: key, rate limit, account), `refused` (a chat call for an
 * unknown model: key, body, lookup, 404), `echo` and `echo-stream` (the built-in `sandbox/echo`:
 * the whole LLM path — hold, settlement, records — with no upstream), `relayed` and
 * `relayed-stream` (chat relayed to the zero-latency fake upstream of bench/lib, 20 chunks when
 * streamed; the only sockets are the upstream's, Postgres's and Redis's), `relayed-paced` (the
 * same stream with each event written on its own 1 ms after the last, as a real LLM sends tokens:
 * one read, decode and client write per event; fewer calls per second, the same CPU measure).
 * Rounds run every case in turn, so a drift of the machine reaches them all alike.
 *
 * `--profile` runs the same in a child started with `bun --cpu-prof` and sums up its profile
 * (bench/lib/cpu-profile-summary.ts): pass one case, so the profile is that case's (set-up and
 * warm-up are in it too, a small share at the default sizes).
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { bootstrap } from '../src/app/bootstrap.ts';
import { buildApp } from '../src/app/build-app.ts';
import { requestHandler } from '../src/app/serve.ts';
import { ADMIN_TOKEN } from '../tests/helpers/gateway-process.ts';
import { createTestDatabase, dropTestDatabases, REDIS_URL } from '../tests/helpers/services.ts';
import { numberArg, stringArg } from './lib/cli-args.ts';
import { summarizeCpuProfile } from './lib/cpu-profile-summary.ts';
import { writeBenchConfig } from './lib/sandbox-config.ts';
import { chatBody } from './lib/llm-bench-stack.ts';
import { conversation } from '../tests/helpers/prose.ts';
import { cpuSeconds, mainThreadCpuSeconds } from './lib/proc-cpu.ts';
import { spawnPortPrinter } from './lib/spawn-port-printer.ts';
import { table } from './lib/wrk.ts';

const ALL_CASES = ['account', 'refused', 'echo', 'echo-stream', 'relayed', 'relayed-stream', 'relayed-paced'] as const;
type Case = (typeof ALL_CASES)[number];
const CASES = stringArg('--cases', ALL_CASES.join(','))
  .split(',')
  .filter((c): c is Case => (ALL_CASES as readonly string[]).includes(c));
const REQUESTS = numberArg('--requests', 20_000);
const WARMUP = numberArg('--warmup', 5_000);
const ROUNDS = numberArg('--rounds', 3);
const CONCURRENCY = numberArg('--concurrency', 16);
const ROOT = resolve(import.meta.dir, '..');
const log = (line: string) => process.stderr.write(`${line}\n`);

if (process.argv.includes('--profile')) {
  // Again in a child under the profiler; then its profile, summed up.
  const dir = await mkdtemp(join(tmpdir(), 'bench-in-process-prof-'));
  const args = process.argv.slice(2).filter((a) => a !== '--profile');
  const child = Bun.spawn([process.execPath, '--cpu-prof', `--cpu-prof-dir=${dir}`, 'run', import.meta.path, ...args], {
    stdout: 'inherit',
    stderr: 'inherit',
    env: process.env,
  });
  if ((await child.exited) !== 0) throw new Error('the profiled run failed');
  const [file] = (await readdir(dir)).filter((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error(`no profile was written to ${dir}`);
  console.log(`\n### CPU profile of the run above (\`bun --cpu-prof\`)\n`);
  console.log(await summarizeCpuProfile(join(dir, file), ROOT, numberArg('--top', 25)));
  await rm(dir, { recursive: true, force: true });
  process.exit(0);
}

const relays = CASES.some((c) => c.startsWith('relayed'));
const upstream = relays
  ? await spawnPortPrinter(resolve(import.meta.dir, 'lib/fake-openai-upstream.ts'), 'fake upstream')
  : undefined;
const workDir = await mkdtemp(join(tmpdir(), 'bench-in-process-'));
const databaseUrl = await createTestDatabase('bench_in_process');
const configPath = await writeBenchConfig(workDir, { sandbox: true, upstreamPort: upstream?.port });

const started = await bootstrap({
  DATABASE_URL: databaseUrl,
  REDIS_URL,
  REDIS_PREFIX: `bench-in-process-${Date.now()}:`,
  GATEWAY_CONFIG: configPath,
  DATA_DIR: workDir,
  ADMIN_TOKEN,
  LOG_LEVEL: 'warn',
  WORKERS: '1',
  RATE_LIMIT_PER_MINUTE: '100000000',
  HOST: '127.0.0.1',
  PORT: '8080',
});
const { ctx, services } = started;
services.reservations.start();
services.keyBudgets.start();
const handler = requestHandler(ctx, buildApp(ctx, services));
const peer = { requestIP: () => ({ address: '127.0.0.1' }) };
const BASE = 'http://127.0.0.1:8080';

const send = (path: string, init: RequestInit = {}) => handler.fetch(new Request(`${BASE}${path}`, init), peer);
const created = await send('/admin/accounts', {
  method: 'POST',
  headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
  body: JSON.stringify({ email: `bench-${Date.now()}@example.com`, balance_usd: 1_000_000 }),
});
const key = ((await created.json()) as { data: { api_key: string } }).data.api_key;

/**
 * `--messages N`: the chat calls carry a conversation of N messages of 2,000 characters of
 * word-like text (tests/helpers/prose.ts) instead of the two short ones, as agents and long chats
 * send; each body is built once.
 */
const MESSAGES = numberArg('--messages', 0);
const bodyOf = (model: string, stream: boolean) =>
  MESSAGES > 0
    ? JSON.stringify({
        model,
        messages: conversation(MESSAGES, 2000),
        max_tokens: 64,
        ...(stream ? { stream: true } : {}),
      })
    : chatBody(model, stream);
const post = (model: string, stream: boolean) => {
  const body = bodyOf(model, stream);
  return () =>
    send('/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body,
    });
};
const requests: Record<Case, { make: () => Promise<Response>; status: number }> = {
  account: { make: () => send('/v1/account', { headers: { authorization: `Bearer ${key}` } }), status: 200 },
  refused: { make: post('nobody/no-such-model', false), status: 404 },
  echo: { make: post('sandbox/echo', false), status: 200 },
  'echo-stream': { make: post('sandbox/echo', true), status: 200 },
  relayed: { make: post('fake/bench', false), status: 200 },
  'relayed-stream': { make: post('fake/bench', true), status: 200 },
  'relayed-paced': { make: post('fake/paced', true), status: 200 },
};

/** `n` requests of one case, `CONCURRENCY` in flight, each answer read to its end. */
async function drive(which: Case, n: number) {
  const { make, status } = requests[which];
  let next = 0;
  let wrong = 0;
  const lane = async () => {
    while (next++ < n) {
      const res = await make();
      await res.arrayBuffer();
      if (res.status !== status) wrong++;
    }
  };
  const cpu0 = cpuSeconds(process.pid);
  const main0 = mainThreadCpuSeconds(process.pid);
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, lane));
  const seconds = (performance.now() - t0) / 1000;
  return {
    perSecond: n / seconds,
    cpuUs: ((cpuSeconds(process.pid) - cpu0) * 1e6) / n,
    mainUs: ((mainThreadCpuSeconds(process.pid) - main0) * 1e6) / n,
    wrong,
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
try {
  for (const c of CASES) {
    const { wrong } = await drive(c, WARMUP);
    if (wrong) throw new Error(`${c}: ${wrong} of ${WARMUP} warm-up requests were not answered ${requests[c].status}`);
  }
  const results = new Map<Case, Array<Awaited<ReturnType<typeof drive>>>>();
  for (let round = 1; round <= ROUNDS; round++)
    for (const c of CASES) {
      const r = await drive(c, REQUESTS);
      log(`round ${round} ${c}: ${r.perSecond.toFixed(0)} req/s, ${r.cpuUs.toFixed(1)} µs CPU per request`);
      results.set(c, [...(results.get(c) ?? []), r]);
    }
  console.log(
    `\n### In process (${CONCURRENCY} in flight, ${REQUESTS} requests per case and round, ${ROUNDS} rounds, Postgres+Redis; Bun ${Bun.version}; ${MESSAGES > 0 ? `chat calls of ${MESSAGES} messages of 2,000 characters` : 'chat calls of two short messages'})\n`,
  );
  console.log(
    table(
      CASES.map((c) => {
        const rs = results.get(c) ?? [];
        return {
          case: c,
          'req/s (each round)': rs.map((r) => r.perSecond.toFixed(0)).join(' / '),
          'CPU µs per request (each round)': rs.map((r) => r.cpuUs.toFixed(1)).join(' / '),
          'median CPU µs': median(rs.map((r) => r.cpuUs)).toFixed(1),
          'median main thread µs': median(rs.map((r) => r.mainUs)).toFixed(1),
          'wrong status': rs.reduce((n, r) => n + r.wrong, 0) || '—',
        };
      }),
    ),
  );
} finally {
  await services.usage.stop();
  await services.reservations.stop();
  await services.keyBudgets.stop();
  ctx.rateLimiter.stop();
  await ctx.store.close();
  await started.database.close();
  upstream?.proc.kill();
  await dropTestDatabases([databaseUrl]);
  await rm(workDir, { recursive: true, force: true });
}
process.exit(0);

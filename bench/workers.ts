/**
 * Throughput per number of worker processes (docs/scaling.md). Prints a Markdown table (figures,
 * not a test).
 *
 *   bun run bench/workers.ts [--seconds 10] [--connections 64] [--accounts 16] [--workers 1,2]
 *
 * `--workers` defaults to 1, 2, 4… up to the machine's cores. Starts, as separate processes, the
 * zero-latency fake upstream (bench/lib/fake-openai-upstream.ts) once, then for each worker count
 * a fresh gateway on Postgres+Redis (its own database and Redis prefix, a GATEWAY_CONFIG with one
 * `openai` provider pointing at the fake) with `WORKERS=n`, waits until every worker listens,
 * and measures with wrk (2 s warm-up per row, requests signed in turn by `--accounts` accounts'
 * keys), with the CPU per request of all the gateway's processes together and of Postgres
 * (bench/lib/machine-cpu.ts): near-linear growth needs the first to stay flat as workers are
 * added, whatever the cores left for the rest allow. The cases: an authenticated read (`GET /v1/account`, which
 * touches neither the upstream nor the database on a warm key), and non-streamed and streamed
 * chat completions relayed to the fake (each one also a usage record in Postgres). wrk, the fake
 * upstream, Postgres, Redis and the gateway all share this machine's cores, so the curve flattens
 * when they, not the gateway, are the limit. Every process it starts is stopped on exit.
 */
import { availableParallelism } from 'node:os';
import { mkdtemp, readdir, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Subprocess } from 'bun';
import { createAccount, uniqueEmail } from '../tests/helpers/api.ts';
import { MODES, startGateway, type GatewayProcess } from '../tests/helpers/gateway-process.ts';
import { dropTestDatabases } from '../tests/helpers/services.ts';
import { benchGatewayEnv } from './lib/llm-bench-stack.ts';
import { withMachineShares } from './lib/machine-cpu.ts';
import { processStats } from './lib/proc-cpu.ts';
import { stopProcesses } from './lib/stop-processes.ts';
import { spawnPortPrinter } from './lib/spawn-port-printer.ts';
import { requireWrk, runWrk, table, type LoadResult } from './lib/wrk.ts';
import { stringArg } from './lib/cli-args.ts';

const SECONDS = Number(stringArg('--seconds', '10')) || 10;
const CONNECTIONS = Number(stringArg('--connections', '64')) || 64;
const ACCOUNTS = Number(stringArg('--accounts', '16')) || 16;
const defaultCounts: number[] = [];
for (let n = 1; n <= Math.max(2, availableParallelism()); n *= 2) defaultCounts.push(n);
const COUNTS = stringArg('--workers', defaultCounts.join(','))
  .split(',')
  .map(Number)
  .filter((n) => Number.isInteger(n) && n >= 1);
const HOST = '127.0.0.1';

requireWrk();
const log = (line: string) => process.stderr.write(`${line}\n`);

const workDir = await mkdtemp(join(tmpdir(), 'bench-workers-'));
let upstream: Subprocess<'ignore', 'pipe', 'pipe'> | undefined;
let gateway: GatewayProcess | undefined;
const databases: string[] = [];

async function cleanup(): Promise<void> {
  await stopProcesses([gateway?.proc.exitCode === null ? gateway : undefined], [upstream], 35_000);
  await dropTestDatabases(databases);
  await rm(workDir, { recursive: true, force: true });
}
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    log(`\n${sig}: cleaning up`);
    void cleanup().finally(() => process.exit(130));
  });
}

/** Inodes of the sockets listening on `port` (IPv4 and IPv6), from /proc/net. */
async function listeningInodes(port: number): Promise<Set<string>> {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  const inodes = new Set<string>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await Bun.file(file)
      .text()
      .catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      // local_address is ADDR:PORT; state 0A is LISTEN; column 9 is the inode.
      if (cols[1]?.endsWith(`:${hexPort}`) && cols[3] === '0A' && cols[9]) inodes.add(cols[9]);
    }
  }
  return inodes;
}

/** Whether `pid` holds one of `inodes` among its open files. */
async function holdsSocket(pid: number, inodes: Set<string>): Promise<boolean> {
  const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
  for (const fd of fds) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    if (inode && inodes.has(inode)) return true;
  }
  return false;
}

/**
 * Waits until the primary and `n - 1` child processes each hold a socket listening on the port
 * (read from /proc, so the gateway can run with LOG_LEVEL=warn and no per-request log lines).
 */
/** The pids whose parent is `parent` (a primary's workers), from /proc. */
function childPids(parent: number): number[] {
  return processStats()
    .filter((p) => p.ppid === parent)
    .map((p) => p.pid);
}

async function allListening(gw: GatewayProcess, n: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const inodes = await listeningInodes(gw.port);
    const children = childPids(gw.proc.pid);
    let listening = (await holdsSocket(gw.proc.pid, inodes)) ? 1 : 0;
    for (const pid of children) if (await holdsSocket(pid, inodes)) listening++;
    if (listening >= n) return;
    if (Date.now() > deadline) throw new Error(`only ${listening} of ${n} processes listening:\n${gw.output()}`);
    await Bun.sleep(100);
  }
}

/**
 * A wrk script sending `body` (GET when undefined) with the accounts' keys in turn, so the load
 * comes from many accounts as in production, not from one account's balance row.
 */
async function loadScript(name: string, body: unknown, keys: string[]): Promise<string> {
  const path = join(workDir, `${name}.lua`);
  const method = body === undefined ? 'GET' : 'POST';
  const payload = body === undefined ? 'nil' : `[==[${JSON.stringify(body)}]==]`;
  await writeFile(
    path,
    [
      `local keys = { ${keys.map((k) => `"${k}"`).join(', ')} }`,
      'local n = 0',
      'request = function()',
      '  n = n + 1',
      `  local headers = { ["Authorization"] = "Bearer " .. keys[(n % #keys) + 1], ["Content-Type"] = "application/json" }`,
      `  return wrk.format("${method}", nil, headers, ${payload})`,
      'end',
      '',
    ].join('\n'),
  );
  return path;
}

const chat = (stream: boolean) => ({
  model: 'fake/bench',
  messages: [{ role: 'user', content: 'Say twenty words.' }],
  max_tokens: 64,
  ...(stream ? { stream: true } : {}),
});

try {
  const started = await spawnPortPrinter(resolve(import.meta.dir, 'lib/fake-openai-upstream.ts'), 'fake upstream');
  upstream = started.proc;
  const configPath = join(workDir, 'gateway.yaml');
  await writeFile(
    configPath,
    [
      'providers:',
      `  - {id: fake, kind: openai, base_url: "http://${HOST}:${started.port}/v1", api_key: x}`,
      'models:',
      '  - {id: fake/bench, category: llm, upstream_model: bench, display_name: Bench, pricing: {input_per_mtok: 1, output_per_mtok: 2}}',
      '',
    ].join('\n'),
  );

  const rows: Array<Record<string, string | number>> = [];
  const base = new Map<string, number>();
  for (const workers of COUNTS) {
    const modeEnv = await MODES[0]!.env(`bench_workers_${workers}`);
    if (modeEnv.DATABASE_URL) databases.push(modeEnv.DATABASE_URL);
    gateway = await startGateway({
      ...modeEnv,
      WORKERS: String(workers),
      GATEWAY_CONFIG: configPath,
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_MINUTE: '100000000',
      // A setting to try without editing the script, as every benchmark stack takes it.
      ...benchGatewayEnv(),
    });
    await allListening(gateway, workers);
    const keys: string[] = [];
    for (let i = 0; i < ACCOUNTS; i++)
      keys.push((await createAccount(gateway, uniqueEmail('bench-workers'), 1_000_000)).key);
    const cases: Array<{ name: string; url: string; script: string }> = [
      {
        name: 'GET /v1/account',
        url: `${gateway.url}/v1/account`,
        script: await loadScript('account', undefined, keys),
      },
      {
        name: 'chat, non-streamed',
        url: `${gateway.url}/v1/chat/completions`,
        script: await loadScript('chat', chat(false), keys),
      },
      {
        name: 'chat, streamed',
        url: `${gateway.url}/v1/chat/completions`,
        script: await loadScript('chat-stream', chat(true), keys),
      },
    ];
    for (const c of cases) {
      const opts = { url: c.url, connections: CONNECTIONS, script: c.script };
      await runWrk({ ...opts, seconds: 2 });
      const gw = gateway;
      const { result: r, shares } = await withMachineShares(
        () => [gw.proc.pid, ...childPids(gw.proc.pid)],
        (): Promise<LoadResult> => runWrk({ ...opts, seconds: SECONDS }),
      );
      if (workers === COUNTS[0]) base.set(c.name, r.requestsPerSec);
      const first = base.get(c.name) ?? Number.NaN;
      rows.push({
        workers,
        case: c.name,
        connections: CONNECTIONS,
        'req/s': Math.round(r.requestsPerSec),
        [`× ${COUNTS[0]} worker${COUNTS[0] === 1 ? '' : 's'}`]: (r.requestsPerSec / first).toFixed(2),
        'p50 ms': r.p50Ms.toFixed(2),
        'p99 ms': r.p99Ms.toFixed(2),
        'gateway CPU ms per request (all processes)': ((shares.gateway * 1000) / r.requestsPerSec).toFixed(3),
        'Postgres CPU ms per request': ((shares.postgres * 1000) / r.requestsPerSec).toFixed(3),
        'busy % per core': shares.cores.map((c) => Math.round(c * 100)).join(' / '),
        'non-2xx': r.non2xx,
        'socket errors': r.errors,
      });
      log(`WORKERS=${workers} ${c.name}: ${Math.round(r.requestsPerSec)} req/s, p99 ${r.p99Ms.toFixed(2)} ms`);
    }
    await gateway.stop();
    gateway = undefined;
  }
  console.log(
    `### Throughput per worker count (${SECONDS} s per row, ${CONNECTIONS} connections, ${ACCOUNTS} accounts, ${availableParallelism()} cores shared by wrk, the fake upstream, Postgres, Redis and the gateway)\n`,
  );
  console.log(table(rows));
} finally {
  await cleanup();
}

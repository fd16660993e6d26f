/**
 * Runs h2load (Debian package `nghttp2-client`, a C load generator) over HTTP/1.1 POSTing one
 * fixed body, closed loop (`-c N -D s`: each client sends its next request when the last is
 * answered, so the rate found is the saturation rate) or open loop (`--rps`: each client sends on
 * a fixed schedule whatever the answers do). Latency percentiles are computed here from
 * `--log-file` (one row per request: start µs since epoch, status, µs to the end of the
 * response), since h2load's summary gives only min/max/mean/sd.
 *
 * Open loop caveat: over HTTP/1.1 a client has one request in flight; a request falling due while
 * the previous one is unanswered waits for it, and h2load times it from when it is sent. Each
 * client therefore gets a period (1 / its rps) far above the latencies measured, and the achieved
 * rate is reported next to the target so a run that fell behind shows.
 * @see https://nghttp2.org/documentation/h2load.1.html
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface H2loadTarget {
  url: string;
  headers: Record<string, string>;
  /** POSTed as JSON; `''` sends a GET instead. */
  body: string;
}

export interface LoadRun {
  /** Requests per second over the measured window (answers counted, any status). */
  rate: number;
  requests: number;
  /** Status code counts, `0` for requests h2load counted as failed without a status. */
  statuses: Map<number, number>;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
}

export function requireH2load(): string {
  const path = Bun.which('h2load');
  if (!path) throw new Error('h2load is not installed: apt-get install -y nghttp2-client');
  return path;
}

export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN;
}

/** The median of some figures (the mean of the middle two for an even count); NaN for none. */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Latency and status figures from an h2load log, rows starting before `fromUs` dropped (the warm-up). */
export function summarizeLog(text: string, fromUs = 0): LoadRun {
  const durations: number[] = [];
  const statuses = new Map<number, number>();
  let first = Number.POSITIVE_INFINITY;
  let last = 0;
  for (const line of text.split('\n')) {
    const [start, status, micros] = line.split('\t').map(Number);
    if (start === undefined || status === undefined || micros === undefined || !Number.isFinite(micros)) continue;
    if (start < fromUs) continue;
    durations.push(micros / 1000);
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
    first = Math.min(first, start);
    last = Math.max(last, start + micros);
  }
  const sorted = Float64Array.from(durations).sort();
  const seconds = (last - first) / 1e6;
  return {
    rate: seconds > 0 ? sorted.length / seconds : Number.NaN,
    requests: sorted.length,
    statuses,
    p50Ms: percentile(sorted, 50),
    p90Ms: percentile(sorted, 90),
    p99Ms: percentile(sorted, 99),
    maxMs: sorted.length ? (sorted[sorted.length - 1] ?? Number.NaN) : Number.NaN,
  };
}

/** One h2load process; its summary output and per-request log. */
async function run(args: string[], target: H2loadTarget, seconds: number): Promise<{ raw: string; log: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'h2load-'));
  try {
    const bodyPath = join(dir, 'body.json');
    const logPath = join(dir, 'log.tsv');
    const post = target.body !== '';
    if (post) await writeFile(bodyPath, target.body);
    const headers = Object.entries({
      ...(post ? { 'content-type': 'application/json' } : {}),
      ...target.headers,
    }).flatMap(([k, v]) => ['-H', `${k}: ${v}`]);
    const proc = Bun.spawn(
      [
        requireH2load(),
        '--h1',
        '-t',
        '1',
        ...args,
        ...(post ? ['-d', bodyPath] : []),
        ...headers,
        '--log-file',
        logPath,
        target.url,
      ],
      { stdout: 'pipe', stderr: 'pipe' },
    );
    // Bounded: h2load is killed if it overruns its schedule by 30 s.
    const killer = setTimeout(() => proc.kill('SIGKILL'), (seconds + 30) * 1000);
    const [out, err, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    clearTimeout(killer);
    if (code !== 0) throw new Error(`h2load failed (${code}): ${out.slice(-2000)}${err.slice(-2000)}`);
    return { raw: out, log: await readFile(logPath, 'utf8') };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Closed loop: `connections` clients back to back for `seconds` after `warmUp` seconds. */
export async function closedLoop(
  target: H2loadTarget,
  connections: number,
  seconds: number,
  warmUp = 2,
): Promise<LoadRun & { raw: string }> {
  const { raw, log } = await run(
    ['-c', String(connections), '-D', String(seconds), '--warm-up-time', String(warmUp)],
    target,
    seconds + warmUp,
  );
  const summary = summarizeLog(log);
  // h2load's own figure covers exactly the main duration (the log also holds warm-up rows).
  const rate = Number(/finished in [\d.]+\w+, ([\d.]+) req\/s/.exec(raw)?.[1]);
  return { ...summary, raw, rate: Number.isFinite(rate) ? rate : summary.rate };
}

/**
 * Exactly `requests` requests over `connections` connections, each sent when the last answer on
 * its connection is in (for counts, not rates: a gateway under valgrind). Throws unless every
 * request got `status`.
 */
export async function countedRequests(
  target: H2loadTarget,
  connections: number,
  requests: number,
  status = 200,
  timeoutS = 3600,
): Promise<void> {
  const { log } = await run(['-c', String(connections), '-n', String(requests)], target, timeoutS);
  const got = summarizeLog(log).statuses.get(status) ?? 0;
  if (got !== requests) throw new Error(`${target.url}: ${got} of ${requests} requests answered ${status}`);
}

/**
 * Open loop at `rate` req/s in all for `seconds`, the first `warmUp` seconds not counted. Clients
 * each get at most `perClientRps` (default 10: a 100 ms period, above the gateway's p99 here) and
 * start 1 ms apart, `k` per ms, so their schedules are spread over the period instead of firing together. Several targets (the
 * same call with different accounts' keys) share the rate evenly, one h2load process each, run
 * together; their logs are summarised as one.
 */
export async function openLoop(
  target: H2loadTarget | H2loadTarget[],
  rate: number,
  seconds: number,
  opts: { warmUp?: number; perClientRps?: number } = {},
): Promise<LoadRun & { clients: number; targetRate: number }> {
  const targets = Array.isArray(target) ? target : [target];
  const warmUp = opts.warmUp ?? 1;
  // Rows that start during the ramp-up (clients starting 1 ms apart) and the warm-up are not counted.
  const fromUs = (Date.now() + warmUp * 1000) * 1000;
  const runs = await Promise.all(
    targets.map(async (t) => {
      const a = openLoopArgs(rate / targets.length, seconds + warmUp, opts.perClientRps ?? 10);
      return { ...(await run(a.args, t, seconds + warmUp)), ...a };
    }),
  );
  const rampUs = Math.max(...runs.map((r) => r.rampMs)) * 1000;
  return {
    ...summarizeLog(runs.map((r) => r.log).join('\n'), fromUs + rampUs),
    clients: runs.reduce((n, r) => n + r.clients, 0),
    targetRate: rate,
  };
}

function openLoopArgs(rate: number, seconds: number, perClientRps: number) {
  const clients = Math.max(1, Math.ceil(rate / perClientRps));
  const perClient = rate / clients;
  const perMs = Math.max(1, Math.floor(rate / 1000));
  const total = Math.max(clients, Math.round(rate * seconds));
  const args = [
    '-c',
    String(clients),
    '-r',
    String(perMs),
    '--rate-period',
    '1ms',
    '--rps',
    perClient.toFixed(3),
    '-n',
    String(total),
  ];
  return { args, clients, rampMs: Math.ceil(clients / perMs) };
}

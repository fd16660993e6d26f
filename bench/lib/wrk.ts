/**
 * Runs wrk (Debian's `wrk` package: a C load generator, so the measuring tool takes as little of
 * this 2-core machine as possible) and parses requests/s and latency percentiles.
 */
export interface LoadResult {
  connections: number;
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
}

function toMs(value: string): number {
  const match = /^([\d.]+)(us|ms|s)$/.exec(value.trim());
  if (!match) return Number.NaN;
  const n = Number(match[1]);
  return match[2] === 'us' ? n / 1000 : match[2] === 's' ? n * 1000 : n;
}

export function requireWrk(): string {
  const path = Bun.which('wrk');
  if (!path) throw new Error('wrk is not installed: apt-get install -y wrk');
  return path;
}

export async function runWrk(opts: {
  url: string;
  connections: number;
  seconds: number;
  headers?: Record<string, string>;
  threads?: number;
  script?: string;
}): Promise<LoadResult> {
  const args = [
    requireWrk(),
    `-t${opts.threads ?? Math.min(opts.connections, 2)}`,
    `-c${opts.connections}`,
    `-d${opts.seconds}s`,
    '--latency',
    ...Object.entries(opts.headers ?? {}).flatMap(([k, v]) => ['-H', `${k}: ${v}`]),
    ...(opts.script ? ['-s', opts.script] : []),
    opts.url,
  ];
  const proc = Bun.spawn(args, { stdout: 'pipe', stderr: 'pipe' });
  const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  if (code !== 0) throw new Error(`wrk failed (${code}): ${out}`);
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
  const p50 = toMs(/\s50%\s+(\S+)/.exec(out)?.[1] ?? '');
  const p99 = toMs(/\s99%\s+(\S+)/.exec(out)?.[1] ?? '');
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const errors = sock ? sock.slice(1).reduce((s, n) => s + Number(n), 0) : 0;
  return { connections: opts.connections, requestsPerSec: rps, p50Ms: p50, p99Ms: p99, non2xx, errors };
}

/** Peak resident set (VmHWM) of a process, in MB, from /proc. */
export async function peakRssMb(pid: number): Promise<number> {
  const status = await Bun.file(`/proc/${pid}/status`).text();
  const kb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN);
  return Math.round((kb / 1024) * 10) / 10;
}

export function table(rows: Array<Record<string, string | number>>): string {
  const first = rows[0];
  if (!first) return '';
  const cols = Object.keys(first);
  const line = (cells: Array<string | number>) => `| ${cells.join(' | ')} |`;
  return [line(cols), line(cols.map(() => '---')), ...rows.map((r) => line(cols.map((c) => r[c] ?? '')))].join('\n');
}

/**
 * wrk POSTing one fixed JSON body, with the totals bench/lib/wrk.ts does not parse: requests
 * completed and how many of them were 2xx/3xx (wrk counts status ≥ 400 as "Non-2xx or 3xx").
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { requireWrk } from './wrk.ts';

export interface PostLoadResult {
  connections: number;
  seconds: number;
  /** Requests wrk completed (answers read), including non-2xx. */
  requests: number;
  requestsPerSec: number;
  /** `requests - non2xx`: answers below 400 (the gateway answers 200 or an error status). */
  ok: number;
  okPerSec: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  non2xx: number;
  socketErrors: number;
  raw: string;
}

function toMs(value: string): number {
  const match = /^([\d.]+)(us|ms|s|m)$/.exec(value.trim());
  if (!match) return Number.NaN;
  const n = Number(match[1]);
  return match[2] === 'us' ? n / 1000 : match[2] === 's' ? n * 1000 : match[2] === 'm' ? n * 60_000 : n;
}

/** Writes a wrk Lua script that POSTs `body` with `headers` (plus JSON content type); returns its path. */
export async function writePostScript(
  dir: string,
  name: string,
  body: string,
  headers: Record<string, string>,
): Promise<string> {
  const path = join(dir, `${name.replace(/\W+/g, '-')}.lua`);
  const lines = Object.entries({ 'Content-Type': 'application/json', ...headers }).map(
    ([k, v]) => `wrk.headers[ [==[${k}]==] ] = [==[${v}]==]`,
  );
  await writeFile(path, `wrk.method = "POST"\nwrk.body = [==[${body}]==]\n${lines.join('\n')}\n`);
  return path;
}

/** Runs wrk with a script; killed if it overruns its duration by 30 s. */
export async function runWrkPost(opts: {
  url: string;
  connections: number;
  seconds: number;
  script: string;
  threads?: number;
}): Promise<PostLoadResult> {
  const args = [
    requireWrk(),
    `-t${opts.threads ?? Math.min(opts.connections, 2)}`,
    `-c${opts.connections}`,
    `-d${opts.seconds}s`,
    '--timeout',
    '10s',
    '--latency',
    '-s',
    opts.script,
    opts.url,
  ];
  const proc = Bun.spawn(args, { stdout: 'pipe', stderr: 'pipe' });
  const killer = setTimeout(() => proc.kill('SIGKILL'), (opts.seconds + 30) * 1000);
  try {
    const [out, err, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    if (code !== 0) throw new Error(`wrk failed (${code}): ${out}${err}`);
    const requests = Number(/(\d+) requests in ([\d.]+)(\w+)/.exec(out)?.[1] ?? Number.NaN);
    const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
    const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
    const socketErrors = sock ? sock.slice(1).reduce((s, n) => s + Number(n), 0) : 0;
    const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
    const ok = requests - non2xx;
    return {
      connections: opts.connections,
      seconds: opts.seconds,
      requests,
      requestsPerSec: rps,
      ok,
      okPerSec: requests > 0 ? (rps * ok) / requests : 0,
      p50Ms: toMs(/\s50%\s+(\S+)/.exec(out)?.[1] ?? ''),
      p90Ms: toMs(/\s90%\s+(\S+)/.exec(out)?.[1] ?? ''),
      p99Ms: toMs(/\s99%\s+(\S+)/.exec(out)?.[1] ?? ''),
      non2xx,
      socketErrors,
      raw: out,
    };
  } finally {
    clearTimeout(killer);
  }
}

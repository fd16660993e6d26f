/**
 * The embedded default (no DATABASE_URL, no REDIS_URL: PGlite and the in-process store) against
 * Postgres+Redis: memory and CPU per call. Prints a Markdown table (figures, not a test).
 *
 *   bun run bench/embedded.ts [--seconds 10] [--modes embedded,postgres+redis] [--no-pin]
 *
 * Per mode: starts the zero-latency fake upstream and a gateway on a fresh data dir (or database)
 * through bench/lib/llm-bench-stack.ts, then records
 * - first start: the gateway's peak RSS from spawn to healthy (VmHWM: on the embedded default this
 *   covers creating the database cluster) and how long that took;
 * - idle: its RSS 2 s after start;
 * - under h2load closed loop, 64 connections, non-streamed then streamed chat: peak RSS (sampled
 *   every 10 ms), requests/s, and the gateway's CPU per call, whole process and main thread (the
 *   JavaScript event loop; work on other threads, e.g. a database worker, is not in it), and
 *   with the database: on Postgres+Redis, plus the Postgres backends serving the gateway's
 *   database (Redis is shared and not counted); on the embedded default the database is in the
 *   gateway's process already.
 * Every process it starts is stopped at the end, also on error or Ctrl-C; traffic goes to 127.0.0.1 only.
 */
import { readFileSync } from 'node:fs';
import { machine } from './lib/cpu-pin.ts';
import { closedLoop, requireH2load, type LoadRun } from './lib/h2load.ts';
import { checkTarget, startLlmBenchStack } from './lib/llm-bench-stack.ts';
import { backendCpu, backendCpuSince } from './lib/postgres-backend-cpu.ts';
import { cpuSeconds, mainThreadCpuSeconds } from './lib/proc-cpu.ts';
import { rssKb, sampleRss } from './lib/rss-sampler.ts';
import { table } from './lib/wrk.ts';
import { stringArg } from './lib/cli-args.ts';

const SECONDS = Number(stringArg('--seconds', '10')) || 10;
const MODES = stringArg('--modes', 'embedded,postgres+redis').split(',') as Array<'embedded' | 'postgres+redis'>;
const CONNECTIONS = 64;

requireH2load();
const log = (line: string) => process.stderr.write(`${line}\n`);
const mb = (kb: number) => (kb / 1024).toFixed(0);
const ms = (n: number) => (Number.isFinite(n) ? n.toFixed(3) : 'n/a');
const hwmKb = (pid: number) =>
  Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? Number.NaN);
const non200 = (run: LoadRun) =>
  [...run.statuses]
    .filter(([s]) => s !== 200)
    .map(([s, n]) => `${s}×${n}`)
    .join(' ') || '—';

const rows: Array<Record<string, string | number>> = [];
for (const mode of MODES) {
  const t0 = performance.now();
  const stack = await startLlmBenchStack(`embedded_${mode.replace('+', '_')}`, {
    mode,
    pin: !process.argv.includes('--no-pin'),
  });
  try {
    const startMs = performance.now() - t0;
    const pid = stack.gateway.proc.pid;
    const firstStartKb = hwmKb(pid);
    await Bun.sleep(2000);
    const idleKb = await rssKb(pid);
    rows.push({
      mode,
      phase: 'first start',
      'peak RSS MB': mb(firstStartKb),
      note: `healthy after ${Math.round(startMs)} ms (with the fake upstream's start)`,
    });
    rows.push({ mode, phase: 'idle, 2 s after start', 'peak RSS MB': mb(idleKb) });
    const key = await stack.newKey(`bench-embedded-${mode}`);
    for (const stream of [false, true]) {
      const target = stack.chat('gateway', { key, stream });
      await checkTarget(target, stream);
      const databaseUrl = stack.gateway.env.DATABASE_URL;
      const db0 = databaseUrl ? await backendCpu(databaseUrl) : new Map<number, number>();
      const cpu0 = cpuSeconds(pid);
      const main0 = mainThreadCpuSeconds(pid);
      const { result: run, peakKb } = await sampleRss(pid, () => closedLoop(target, CONNECTIONS, SECONDS));
      const dbCpu = databaseUrl ? backendCpuSince(db0, await backendCpu(databaseUrl)) : 0;
      // h2load's log holds the warm-up's requests too: CPU is divided by every request it timed.
      const calls = run.requests;
      const cpuMs = ((cpuSeconds(pid) - cpu0) * 1000) / calls;
      const mainMs = ((mainThreadCpuSeconds(pid) - main0) * 1000) / calls;
      const withDbMs = cpuMs + (dbCpu * 1000) / calls;
      log(
        `${mode} ${stream ? 'streamed' : 'non-streamed'}: ${Math.round(run.rate)} req/s, peak ${mb(peakKb)} MB, ${ms(cpuMs)} ms CPU/call`,
      );
      rows.push({
        mode,
        phase: `${CONNECTIONS} connections, ${stream ? 'streamed' : 'non-streamed'} chat`,
        'peak RSS MB': mb(peakKb),
        'req/s': Math.round(run.rate),
        'p99 ms': ms(run.p99Ms),
        'CPU ms/call': ms(cpuMs),
        'main thread CPU ms/call': ms(mainMs),
        'CPU ms/call with the database': ms(withDbMs),
        'non-200': non200(run),
      });
    }
    rows.push({ mode, phase: 'after the load', 'peak RSS MB': mb(await rssKb(pid)) });
  } finally {
    await stack.stop();
  }
}
// Every row gets every column (the table takes its header from the first row).
const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
console.log(`Machine: ${machine()}; ${new Date().toISOString()}\n`);
console.log(table(rows.map((r) => Object.fromEntries(columns.map((c) => [c, r[c] ?? ''])))));

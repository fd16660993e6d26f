/**
 * CPU per LLM call under closed-loop load once the load itself has warmed the JIT, optionally
 * alternated with another checkout of the gateway (a worktree of an earlier commit), so that both
 * see the same minutes of a shared machine: how bench/README.md measures a change before and after.
 *
 *   bun run bench/cpu-per-call.ts [--stream [--paced]] [--tls] [--seconds 8] [--reps 2] [--warmup-seconds 8]
 *                                 [--connections 16] [--against DIR --pairs 3] [--against-env JSON --pairs 3]
 *
 * Each run starts a fresh pinned stack (bench/lib/llm-bench-stack.ts: the fake upstream and h2load
 * on the load core, the gateway alone on its core, Postgres and Redis moved to the load core),
 * drives `--warmup-seconds` of load, then `--reps` measured phases of `--seconds`: the gateway's
 * CPU (all threads, and its main thread alone, from /proc) over the calls answered. With
 * `--against DIR` (e.g. `git worktree add /tmp/before <commit>` with node_modules linked), runs
 * alternate: DIR's gateway, then this one, `--pairs` times. With `--against-env '{"NAME":"value"}'`
 * instead, this checkout alternates with itself started with those variables too (a setting's
 * cost, e.g. `SETTLEMENT_JOURNAL`). `--tls`: the fake upstream speaks HTTPS, as a real provider
 * does, so the gateway's connections to it cost a TLS handshake each. Prints a Markdown table.
 */
import { resolve } from 'node:path';
import { closedLoop, requireH2load } from './lib/h2load.ts';
import { cpuSeconds, mainThreadCpuSeconds } from './lib/proc-cpu.ts';
import { numberArg, stringArg } from './lib/cli-args.ts';
import type { startLlmBenchStack as StartStack } from './lib/llm-bench-stack.ts';

const STREAM = process.argv.includes('--stream');
/** The stream's events each written on its own by the fake, 1 ms apart, as a real LLM's come. */
const PACED = STREAM && process.argv.includes('--paced');
/** The upstream over HTTPS (a throwaway certificate): new connections cost what they cost a real provider. */
const TLS = process.argv.includes('--tls');
const SECONDS = numberArg('--seconds', 8);
const REPS = numberArg('--reps', 2);
const WARMUP = numberArg('--warmup-seconds', 8);
const CONNECTIONS = numberArg('--connections', 16);
const AGAINST = stringArg('--against', '');
const AGAINST_ENV = stringArg('--against-env', '');
const PAIRS = AGAINST || AGAINST_ENV ? numberArg('--pairs', 3) : 1;

requireH2load();
const log = (line: string) => process.stderr.write(`${line}\n`);

/** What is alternated: checkouts, or this checkout without and with extra variables. */
interface Variant {
  label: string;
  root: string;
  env: Record<string, string>;
}
const here = resolve(import.meta.dir, '..');
const variants: Variant[] = AGAINST
  ? [
      { label: resolve(AGAINST), root: resolve(AGAINST), env: {} },
      { label: 'this checkout', root: here, env: {} },
    ]
  : AGAINST_ENV
    ? [
        { label: 'this checkout', root: here, env: {} },
        { label: `with ${AGAINST_ENV}`, root: here, env: JSON.parse(AGAINST_ENV) as Record<string, string> },
      ]
    : [{ label: 'this checkout', root: here, env: {} }];

interface Phase {
  checkout: string;
  rate: number;
  cpuMs: number;
  mainMs: number;
}

/** One fresh stack of `root`'s gateway: warm-up, then the measured phases. */
async function measure({ label, root, env }: Variant): Promise<Phase[]> {
  const { startLlmBenchStack } = (await import(`${root}/bench/lib/llm-bench-stack.ts`)) as {
    startLlmBenchStack: typeof StartStack;
  };
  const stack = await startLlmBenchStack('cpucall', { pin: true, pinServices: true, env, tls: TLS });
  try {
    const target = stack.chat('gateway', { key: await stack.newKey('cpucall'), stream: STREAM, paced: PACED });
    await closedLoop(target, CONNECTIONS, WARMUP, 0);
    const pid = stack.gateway.proc.pid;
    const phases: Phase[] = [];
    for (let i = 0; i < REPS; i++) {
      const [cpu0, main0] = [cpuSeconds(pid), mainThreadCpuSeconds(pid)];
      const run = await closedLoop(target, CONNECTIONS, SECONDS, 0);
      const calls = run.rate * SECONDS;
      phases.push({
        checkout: label,
        rate: run.rate,
        cpuMs: ((cpuSeconds(pid) - cpu0) * 1000) / calls,
        mainMs: ((mainThreadCpuSeconds(pid) - main0) * 1000) / calls,
      });
    }
    return phases;
  } finally {
    await stack.stop();
  }
}

const phases: Phase[] = [];
for (let pair = 0; pair < PAIRS; pair++)
  for (const variant of variants) {
    const got = await measure(variant);
    for (const p of got) log(`${p.checkout}: ${p.rate.toFixed(0)} req/s, ${p.cpuMs.toFixed(3)} ms CPU per call`);
    phases.push(...got);
  }

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
console.log(
  `\n${STREAM ? `20-chunk streamed${PACED ? ' (paced: an event per write, 1 ms apart)' : ''}` : 'non-streamed'} chat${TLS ? ' (upstream over HTTPS)' : ''}, ${CONNECTIONS} connections, ${REPS} × ${SECONDS} s after ${WARMUP} s of load per run\n`,
);
console.log(
  '| checkout | phases | req/s (each) | CPU ms per call (each) | mean CPU ms per call | mean main thread ms per call |',
);
console.log('| --- | --- | --- | --- | --- | --- |');
for (const { label } of variants) {
  const mine = phases.filter((p) => p.checkout === label);
  console.log(
    `| ${label} | ${mine.length} | ${mine.map((p) => p.rate.toFixed(0)).join(' / ')} | ${mine.map((p) => p.cpuMs.toFixed(3)).join(' / ')} | ${mean(mine.map((p) => p.cpuMs)).toFixed(3)} | ${mean(mine.map((p) => p.mainMs)).toFixed(3)} |`,
  );
}

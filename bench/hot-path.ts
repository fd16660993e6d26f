/**
 * What one LLM call costs the gateway (issue 18's per-call figures), on the pinned stack of
 * bench/lib/llm-bench-stack.ts (the zero-latency fake upstream on core 0, the gateway in
 * Postgres+Redis mode alone on core 1). Prints Markdown tables (figures, not a test).
 *
 *   bun run bench/hot-path.ts [--calls 1000] [--rounds 3] [--seconds 8] [--connections 16] [--warmup 3000]
 *
 * 1. One call at a time: `--calls` requests one after another on one keep-alive connection
 *    (fetch), through the gateway and direct to the fake, alternating in `--rounds` blocks so both
 *    see the same minutes of a shared machine; each timed from sending it to its body's last byte.
 * 2. CPU per call under load: h2load closed loop, `--connections` clients for `--seconds`, the
 *    gateway's CPU (user + system, all threads, /proc) divided by the calls answered.
 * Cases: non-streamed chat (client and upstream both chat completions), the same streamed (20
 * content chunks), and a streamed Messages call translated to the chat upstream. Every case is
 * first warmed up with `--warmup` calls: Bun's JIT keeps compiling the path for thousands of calls,
 * and that compile time would otherwise be counted as the calls' CPU.
 */
import { machine } from './lib/cpu-pin.ts';
import { closedLoop, percentile, requireH2load, type H2loadTarget } from './lib/h2load.ts';
import { checkTarget, startLlmBenchStack } from './lib/llm-bench-stack.ts';
import { cpuSeconds } from './lib/proc-cpu.ts';
import { table } from './lib/wrk.ts';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) || fallback : fallback;
};
const CALLS = arg('--calls', 1000);
const ROUNDS = arg('--rounds', 3);
const SECONDS = arg('--seconds', 8);
const CONNECTIONS = arg('--connections', 16);
const WARMUP = arg('--warmup', 3000);

requireH2load();
const log = (line: string) => process.stderr.write(`${line}\n`);
const ms = (n: number, d = 3) => (Number.isFinite(n) ? n.toFixed(d) : 'n/a');

interface Case {
  name: string;
  stream: boolean;
  gateway: H2loadTarget;
  direct: H2loadTarget;
  /** Text only a complete answer holds. */
  complete: string;
}

/** Sends `n` requests one after another; returns each one's milliseconds to its last byte. */
async function sequential(target: H2loadTarget, n: number): Promise<number[]> {
  const times: number[] = [];
  const headers = { 'content-type': 'application/json', ...target.headers };
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const res = await fetch(target.url, { method: 'POST', headers, body: target.body });
    await res.arrayBuffer();
    times.push(performance.now() - t0);
    if (res.status !== 200) throw new Error(`${target.url}: ${res.status}`);
  }
  return times;
}

const stack = await startLlmBenchStack('hotpath', { pin: !process.argv.includes('--no-pin') });
try {
  const key = await stack.newKey('hotpath');
  const chat = (stream: boolean): Case => ({
    name: stream ? 'chat, streamed (20 chunks)' : 'chat, non-streamed',
    stream,
    gateway: stack.chat('gateway', { key, stream }),
    direct: stack.chat('direct', { stream }),
    complete: stream ? '[DONE]' : '"usage"',
  });
  const messages: Case = {
    name: 'messages → chat upstream, streamed',
    stream: true,
    gateway: {
      url: `${stack.gateway.url}/v1/messages`,
      headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({
        model: 'fake/bench',
        system: 'You are a benchmark.',
        messages: [{ role: 'user', content: 'Say twenty words.' }],
        max_tokens: 64,
        stream: true,
      }),
    },
    direct: stack.chat('direct', { stream: true }),
    complete: 'message_stop',
  };
  const cases = [chat(false), chat(true), messages];
  for (const c of cases) {
    await checkTarget(c.direct, c.stream);
    const res = await fetch(c.gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...c.gateway.headers },
      body: c.gateway.body,
    });
    const text = await res.text();
    if (res.status !== 200 || !text.includes(c.complete))
      throw new Error(`${c.name}: incomplete answer ${res.status} ${text.slice(0, 300)}`);
  }
  log(`machine: ${machine()}; pinned: ${stack.pinned}`);
  const pid = stack.gateway.proc.pid;
  const oneAtATime: Array<Record<string, string>> = [];
  const underLoad: Array<Record<string, string>> = [];
  for (const c of cases) {
    await sequential(c.gateway, WARMUP);
    await sequential(c.direct, 200);
    const gw: number[] = [];
    const direct: number[] = [];
    let cpu = 0;
    for (let r = 0; r < ROUNDS; r++) {
      const c0 = cpuSeconds(pid);
      gw.push(...(await sequential(c.gateway, CALLS)));
      cpu += cpuSeconds(pid) - c0;
      direct.push(...(await sequential(c.direct, CALLS)));
    }
    gw.sort((a, b) => a - b);
    direct.sort((a, b) => a - b);
    oneAtATime.push({
      case: c.name,
      calls: String(gw.length),
      'direct p50 ms': ms(percentile(direct, 50)),
      'gateway p50 ms': ms(percentile(gw, 50)),
      'added p50 ms': `+${ms(percentile(gw, 50) - percentile(direct, 50))}`,
      'direct p99 ms': ms(percentile(direct, 99)),
      'gateway p99 ms': ms(percentile(gw, 99)),
      'added p99 ms': `+${ms(percentile(gw, 99) - percentile(direct, 99))}`,
      'gateway CPU ms per call': ms((cpu * 1000) / gw.length),
    });
    const c0 = cpuSeconds(pid);
    const run = await closedLoop(c.gateway, CONNECTIONS, SECONDS, 0);
    const loadCpu = cpuSeconds(pid) - c0;
    const bad = [...run.statuses].filter(([s]) => s !== 200);
    underLoad.push({
      case: c.name,
      'req/s': run.rate.toFixed(0),
      'p50 ms': ms(run.p50Ms, 2),
      'gateway CPU, % of a core': ((loadCpu / SECONDS) * 100).toFixed(0),
      'gateway CPU ms per call': ms((loadCpu * 1000) / run.requests),
      'non-200': bad.length ? bad.map(([s, n]) => `${s}×${n}`).join(' ') : '—',
    });
    log(`${c.name}: done`);
  }
  console.log(`\n${machine()}; gateway pinned: ${stack.pinned}\n`);
  console.log(`### One call at a time (${ROUNDS} × ${CALLS} calls, alternating with direct)\n`);
  console.log(table(oneAtATime));
  console.log(`\n### CPU per call under load (h2load closed loop, ${CONNECTIONS} connections, ${SECONDS} s)\n`);
  console.log(table(underLoad));
} finally {
  await stack.stop();
}

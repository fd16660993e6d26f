/**
 * What one LLM call costs the gateway (issue 18's per-call figures), on the pinned stack of
 * bench/lib/llm-bench-stack.ts (the zero-latency fake upstream on core 0, the gateway in
 * Postgres+Redis mode alone on core 1). Prints Markdown tables (figures, not a test).
 *
 *   bun run bench/hot-path.ts [--calls 1000] [--rounds 3] [--seconds 8] [--connections 16] [--warmup 3000]
 *                             [--warmup-load-seconds 6] [--cases 1,2,3] [--cpu-prof DIR] [--no-pin] [--no-pin-services]
 *
 * 1. One call at a time: `--calls` requests one after another on one keep-alive connection
 *    (fetch), through the gateway and direct to the fake, alternating in `--rounds` blocks so both
 *    see the same minutes of a shared machine; each timed from sending it to its body's last byte.
 * 2. CPU per call under load: h2load closed loop, `--connections` clients for `--seconds`, the
 *    gateway's CPU (user + system, all threads, /proc) divided by the calls answered.
 * 3. The floor: the same two measures through a bare Bun proxy (bench/lib/bare-proxy.ts: `fetch`
 *    to the upstream and the body streamed back, nothing else) pinned to the gateway's core, so
 *    the gateway's figures read against the HTTP work any Bun relay pays on this machine.
 * Cases: non-streamed chat (client and upstream both chat completions), the same streamed (20
 * content chunks), and a streamed Messages call translated to the chat upstream. Every case is
 * first warmed up with `--warmup-load-seconds` of closed-loop load, then `--warmup` calls one at a
 * time: Bun's JIT keeps compiling the path for about 20,000 calls (its compile thread still took
 * 0.10 ms of CPU per lone call after 3,000, 0.007 ms after 20,000; bench/README.md), and that
 * compile time would otherwise be counted as the calls' CPU.
 */
import { startBareProxy } from './lib/bare-proxy-process.ts';
import { machine } from './lib/cpu-pin.ts';
import { closedLoop, percentile, requireH2load, type H2loadTarget } from './lib/h2load.ts';
import { checkTarget, startLlmBenchStack } from './lib/llm-bench-stack.ts';
import { cpuSeconds, mainThreadCpuSeconds } from './lib/proc-cpu.ts';
import { table } from './lib/wrk.ts';
import { numberArg } from './lib/cli-args.ts';

const CALLS = numberArg('--calls', 1000);
const ROUNDS = numberArg('--rounds', 3);
const SECONDS = numberArg('--seconds', 8);
const CONNECTIONS = numberArg('--connections', 16);
const WARMUP = numberArg('--warmup', 3000);
const WARMUP_LOAD_SECONDS = numberArg('--warmup-load-seconds', 6);

requireH2load();
const log = (line: string) => process.stderr.write(`${line}\n`);
const ms = (n: number, d = 3) => (Number.isFinite(n) ? n.toFixed(d) : 'n/a');

interface Case {
  name: string;
  stream: boolean;
  gateway: H2loadTarget;
  direct: H2loadTarget;
  /** The direct request through the bare proxy (the floor). */
  floor: H2loadTarget;
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

// `--cpu-prof DIR`: the gateway writes a CPU profile there when it stops (count samples, not time).
const profDir = process.argv.includes('--cpu-prof') ? process.argv[process.argv.indexOf('--cpu-prof') + 1] : undefined;
const stack = await startLlmBenchStack('hotpath', {
  pin: !process.argv.includes('--no-pin'),
  // Postgres and Redis off the gateway's core, so its CPU profile and one-at-a-time figures are its own.
  pinServices: !process.argv.includes('--no-pin-services'),
  bunArgs: profDir ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : undefined,
});
const bare = await startBareProxy(stack);
try {
  const key = await stack.newKey('hotpath');
  const chat = (stream: boolean): Case => ({
    name: stream ? 'chat, streamed (20 chunks)' : 'chat, non-streamed',
    stream,
    gateway: stack.chat('gateway', { key, stream }),
    direct: stack.chat('direct', { stream }),
    floor: bare.via(stack.chat('direct', { stream })),
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
    floor: bare.via(stack.chat('direct', { stream: true })),
    complete: 'message_stop',
  };
  // `--cases 1,3`: only those cases (1 non-streamed, 2 streamed, 3 Messages), e.g. for a profile of one.
  const only = process.argv.includes('--cases')
    ? new Set((process.argv[process.argv.indexOf('--cases') + 1] ?? '').split(',').map(Number))
    : undefined;
  const cases = [chat(false), chat(true), messages].filter((_, i) => !only || only.has(i + 1));
  for (const c of cases) {
    await checkTarget(c.direct, c.stream);
    await checkTarget(c.floor, c.stream);
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
    if (WARMUP_LOAD_SECONDS > 0) await closedLoop(c.gateway, CONNECTIONS, WARMUP_LOAD_SECONDS, 0);
    await sequential(c.gateway, WARMUP);
    await sequential(c.direct, 200);
    await sequential(c.floor, WARMUP);
    const gw: number[] = [];
    const direct: number[] = [];
    const floor: number[] = [];
    let cpu = 0;
    let floorCpu = 0;
    for (let r = 0; r < ROUNDS; r++) {
      const c0 = cpuSeconds(pid);
      gw.push(...(await sequential(c.gateway, CALLS)));
      cpu += cpuSeconds(pid) - c0;
      direct.push(...(await sequential(c.direct, CALLS)));
      const f0 = cpuSeconds(bare.proc.pid);
      floor.push(...(await sequential(c.floor, CALLS)));
      floorCpu += cpuSeconds(bare.proc.pid) - f0;
    }
    for (const list of [gw, direct, floor]) list.sort((a, b) => a - b);
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
      'bare proxy added p50 ms': `+${ms(percentile(floor, 50) - percentile(direct, 50))}`,
      'bare proxy CPU ms per call': ms((floorCpu * 1000) / floor.length),
    });
    const c0 = cpuSeconds(pid);
    const m0 = mainThreadCpuSeconds(pid);
    const run = await closedLoop(c.gateway, CONNECTIONS, SECONDS, 0);
    const loadCpu = cpuSeconds(pid) - c0;
    const mainCpu = mainThreadCpuSeconds(pid) - m0;
    const bad = [...run.statuses].filter(([s]) => s !== 200);
    const f0 = cpuSeconds(bare.proc.pid);
    const floorRun = await closedLoop(c.floor, CONNECTIONS, SECONDS, 0);
    const floorLoadCpu = cpuSeconds(bare.proc.pid) - f0;
    const floorPerCall = (floorLoadCpu * 1000) / floorRun.requests;
    const perCall = (loadCpu * 1000) / run.requests;
    underLoad.push({
      case: c.name,
      'req/s': run.rate.toFixed(0),
      'p50 ms': ms(run.p50Ms, 2),
      'gateway CPU, % of a core': ((loadCpu / SECONDS) * 100).toFixed(0),
      'gateway CPU ms per call': ms(perCall),
      // The event loop alone: the rest is Bun's HTTP client, JIT and GC threads.
      'of it main thread': ms((mainCpu * 1000) / run.requests),
      'bare proxy req/s': floorRun.rate.toFixed(0),
      'bare proxy CPU ms per call': ms(floorPerCall),
      'gateway − bare proxy CPU ms': ms(perCall - floorPerCall),
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
  await bare.stop();
  await stack.stop();
}

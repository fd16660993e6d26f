/**
 * CPU per call by how far a call goes into the gateway, so the cost of each stage shows as the
 * difference between two rows of the same run (a profile's samples over-weight native calls;
 * these are the process's own CPU counters):
 *
 *   0. the floors, through a bare Bun server pinned to the gateway's core (bench/lib/bare-proxy.ts):
 *      a GET it answers itself, and a chat call it relays to the fake with `fetch`;
 *   1. the gateway's serving alone: `GET /healthz` (Bun.serve, the request wrapper, Elysia's
 *      routing; no key), then `GET /v1/account` (the key, its rate limit, the account read);
 *   2. refused after its key, body and model lookup (an unknown model: 404, an error's path);
 *   3. `sandbox/echo`: the whole LLM path (decode, hold, key checks, metrics, settlement and
 *      record) with no upstream call, non-streamed and streamed;
 *   4. relayed to the zero-latency fake upstream, non-streamed, then streamed (20 chunks).
 *
 *   bun run bench/call-stages.ts [--seconds 6] [--rounds 2] [--connections 16]
 *
 * One pinned stack (bench/lib/llm-bench-stack.ts, gateway alone on its core; the bare server on
 * the same core, idle while the gateway is measured); each row warms up for 3 s, then runs
 * `--seconds` of closed-loop load; rows alternate for `--rounds`. Prints a Markdown table with
 * every round's figure and the medians.
 */
import { startBareProxy } from './lib/bare-proxy-process.ts';
import { closedLoop, median, requireH2load, type H2loadTarget } from './lib/h2load.ts';
import { cpuSeconds, mainThreadCpuSeconds } from './lib/proc-cpu.ts';
import { numberArg } from './lib/cli-args.ts';
import { chatBody, startLlmBenchStack } from './lib/llm-bench-stack.ts';

const SECONDS = numberArg('--seconds', 6);
const ROUNDS = numberArg('--rounds', 2);
const CONNECTIONS = numberArg('--connections', 16);

requireH2load();
const stack = await startLlmBenchStack('stages', { pin: true, pinServices: true, sandbox: true });
const bare = await startBareProxy(stack);
try {
  const key = await stack.newKey('stages');
  const relayed = stack.chat('gateway', { key });
  const direct = stack.chat('direct');
  const bareUrl = `http://127.0.0.1:${bare.port}`;
  const gatewayUrl = new URL(relayed.url).origin;
  const get = (url: string, headers: Record<string, string> = {}): H2loadTarget => ({ url, headers, body: '' });
  const stages: Array<{ name: string; status: number; target: H2loadTarget; pid?: number }> = [
    { name: 'floor: bare Bun server, GET answered', status: 200, target: get(`${bareUrl}/`), pid: bare.proc.pid },
    {
      name: 'floor: bare Bun server, relayed non-streamed',
      status: 200,
      target: bare.via(direct),
      pid: bare.proc.pid,
    },
    { name: 'GET /healthz (serving, routing; no key)', status: 200, target: get(`${gatewayUrl}/healthz`) },
    {
      name: 'GET /v1/account (key, rate limit, account)',
      status: 200,
      target: get(`${gatewayUrl}/v1/account`, { authorization: `Bearer ${key}` }),
    },
    { name: 'refused: unknown model (404)', status: 404, target: { ...relayed, body: chatBody('nope/none', false) } },
    { name: 'sandbox/echo (no upstream)', status: 200, target: { ...relayed, body: chatBody('sandbox/echo', false) } },
    {
      name: 'sandbox/echo streamed (no upstream)',
      status: 200,
      target: { ...relayed, body: chatBody('sandbox/echo', true) },
    },
    { name: 'relayed, non-streamed', status: 200, target: relayed },
    { name: 'relayed, streamed (20 chunks)', status: 200, target: stack.chat('gateway', { key, stream: true }) },
  ];
  const gatewayPid = stack.gateway.proc.pid;
  const figures = stages.map(() => ({ rate: [] as number[], cpu: [] as number[], main: [] as number[] }));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, stage] of stages.entries()) {
      const pid = stage.pid ?? gatewayPid;
      await closedLoop(stage.target, CONNECTIONS, 3, 0);
      const [cpu0, main0] = [cpuSeconds(pid), mainThreadCpuSeconds(pid)];
      const run = await closedLoop(stage.target, CONNECTIONS, SECONDS, 0);
      const calls = run.rate * SECONDS;
      const wrong = [...run.statuses].filter(([status]) => status !== stage.status);
      if (wrong.length) throw new Error(`${stage.name}: unexpected statuses ${JSON.stringify(wrong)}`);
      const f = figures[i] as (typeof figures)[number];
      f.rate.push(run.rate);
      f.cpu.push(((cpuSeconds(pid) - cpu0) * 1000) / calls);
      f.main.push(((mainThreadCpuSeconds(pid) - main0) * 1000) / calls);
      process.stderr.write(
        `${stage.name}: ${run.rate.toFixed(0)} req/s, ${f.cpu.at(-1)?.toFixed(4)} ms CPU per call\n`,
      );
    }
  }
  console.log(`\n${CONNECTIONS} connections, ${ROUNDS} round(s) of ${SECONDS} s per stage, pinned: ${stack.pinned}\n`);
  console.log(
    '| stage | req/s (each) | CPU ms per call (each) | median CPU ms per call | median main thread ms per call |',
  );
  console.log('| --- | --- | --- | --- | --- |');
  for (const [i, stage] of stages.entries()) {
    const f = figures[i] as (typeof figures)[number];
    console.log(
      `| ${stage.name} | ${f.rate.map((r) => r.toFixed(0)).join(' / ')} | ${f.cpu.map((c) => c.toFixed(3)).join(' / ')} | ${median(f.cpu).toFixed(3)} | ${median(f.main).toFixed(3)} |`,
    );
  }
} finally {
  await bare.stop();
  await stack.stop();
}

/**
 * Instructions per call, counted by valgrind's callgrind in the gateway process (every thread:
 * the request thread, the JIT's, the collector's): a figure that does not move with the
 * machine's regime, so a change of a few percent shows in one run where CPU seconds on a shared
 * VM spread by ±40 % (bench/README.md). It counts user-space instructions only: system calls'
 * kernel time, cache misses and waiting are not in it, so it is for before/after comparisons of
 * the gateway's own code, beside (not instead of) `bench/cpu-per-call.ts`.
 *
 *   bun run bench/instructions-per-call.ts [--calls 2000] [--warm 2000] [--connections 8]
 *     [--cases refused,echo,echo-stream,messages] [--against DIR --pairs 1]
 *
 * Cases: `account` (`GET /v1/account`), `refused` (an unknown model: 404 after the key and the
 * body), `echo` and `echo-stream` (chat completions on `sandbox/echo`: the whole LLM path —
 * decode, holds, key checks, metrics, settlement and record — with no upstream), `messages`
 * (a Messages client on `sandbox/echo`: the translated path). Each case is sent `--warm` times,
 * then the counters are zeroed (`callgrind_control -z`), `--calls` more are sent and the counters
 * read (`callgrind_control -d`). JavaScriptCore compiles on the request thread
 * (`BUN_JSC_useConcurrentJIT=0`): when a function's optimised code arrives would otherwise depend
 * on thread timing, which moved the count by 3–5 % between runs.
 *
 * What runs by the clock rather than per call (timers, the queues' polls, a collection that
 * happens to fall in the window) is counted too, and under valgrind a call takes 15–40 ms of wall
 * time: two runs of the same code differed by 3–5 % (bench/README.md), so a difference smaller
 * than that needs `--pairs`. Subtracting an idle gateway's rate made it worse (that rate itself
 * moved 2.5× between runs). Eight connections by default: with one, each call is settled alone
 * but takes twice the wall time, and runs differed by 7 %.
 *
 * Relayed calls are not counted: Bun's HTTP client parses an upstream's answer with an SSE4.2
 * string instruction (`pcmpestri`) that valgrind 3.19 cannot decode, and the gateway dies of
 * SIGILL at its first `fetch`. `--against DIR` (a worktree of another commit, node_modules
 * linked) runs DIR's `src/main.ts` the same way, alternated with this checkout `--pairs` times.
 * Needs valgrind (`callgrind_control`), h2load, and the Postgres and Redis of the tests.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createAccount, uniqueEmail } from '../tests/helpers/api.ts';
import { MODES, startGateway, type GatewayProcess } from '../tests/helpers/gateway-process.ts';
import { runCommand } from '../tests/helpers/run-command.ts';
import { dropTestDatabases } from '../tests/helpers/services.ts';
import { numberArg, stringArg } from './lib/cli-args.ts';
import { countedRequests, requireH2load, type H2loadTarget } from './lib/h2load.ts';
import { chatBody } from './lib/llm-bench-stack.ts';
import { writeSandboxConfig } from './lib/sandbox-config.ts';

const CALLS = numberArg('--calls', 2000);
const WARM = numberArg('--warm', 2000);
const CONNECTIONS = numberArg('--connections', 8);
const CASES = stringArg('--cases', 'refused,echo,echo-stream,messages').split(',');
const AGAINST = stringArg('--against', '');
const PAIRS = AGAINST ? numberArg('--pairs', 1) : 1;

requireH2load();
if (!Bun.which('callgrind_control')) throw new Error('valgrind is not installed: apt-get install -y valgrind');
const log = (line: string) => process.stderr.write(`${line}\n`);

const messagesBody = JSON.stringify({
  model: 'sandbox/echo',
  max_tokens: 64,
  system: 'You are a benchmark.',
  messages: [{ role: 'user', content: 'Say twenty words.' }],
});

/** What each case sends, with its key, and the status it must get. */
function target(name: string, url: string, key: string): H2loadTarget & { status: number } {
  const auth = { authorization: `Bearer ${key}` };
  switch (name) {
    case 'account':
      return { url: `${url}/v1/account`, headers: auth, body: '', status: 200 };
    case 'refused':
      return { url: `${url}/v1/chat/completions`, headers: auth, body: chatBody('nobody/none', false), status: 404 };
    case 'echo':
      return { url: `${url}/v1/chat/completions`, headers: auth, body: chatBody('sandbox/echo', false), status: 200 };
    case 'echo-stream':
      return { url: `${url}/v1/chat/completions`, headers: auth, body: chatBody('sandbox/echo', true), status: 200 };
    case 'messages':
      return {
        url: `${url}/v1/messages`,
        headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01' },
        body: messagesBody,
        status: 200,
      };
    default:
      throw new Error(`unknown case ${name}`);
  }
}

/** callgrind_control finds the process by a file named after the USER and HOST it started with. */
async function control(gateway: GatewayProcess, flag: '-z' | '-d'): Promise<void> {
  const env = { PATH: process.env.PATH ?? '', HOST: gateway.env.HOST ?? '' };
  const { out, err, code } = await runCommand(['callgrind_control', flag, String(gateway.proc.pid)], { env });
  if (code !== 0 || err.includes('error')) throw new Error(`callgrind_control ${flag}: ${out}${err}`);
}

/** The total of the dump `-d` writes next to the output file (`cg.out.N`). */
async function dumpTotal(gateway: GatewayProcess, dir: string): Promise<number> {
  const before = new Set(await readdir(dir));
  await control(gateway, '-d');
  for (let i = 0; i < 600; i++) {
    const file = (await readdir(dir)).find((f) => f.startsWith('cg.out.') && !before.has(f));
    if (file) {
      await Bun.sleep(200); // written in one go, but not necessarily by the time it is listed
      const total = Number(/^(?:totals|summary): (\d+)/m.exec(await readFile(join(dir, file), 'utf8'))?.[1]);
      if (Number.isFinite(total)) return total;
    }
    await Bun.sleep(100);
  }
  throw new Error('callgrind wrote no dump within 60 s');
}

/** One gateway of `root` under callgrind: instructions per call of every case. */
async function measure(root: string): Promise<Map<string, number>> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-icount-'));
  const config = await writeSandboxConfig(dir);
  const modeEnv = await MODES[0]!.env('bench_icount');
  let gateway: GatewayProcess | undefined;
  try {
    gateway = await startGateway(
      {
        ...modeEnv,
        GATEWAY_CONFIG: config,
        LOG_LEVEL: 'warn',
        RATE_LIMIT_PER_MINUTE: '100000000',
        BUN_JSC_useConcurrentJIT: '0',
      },
      {
        root,
        wrapper: ['valgrind', '--tool=callgrind', '--smc-check=all-non-file', `--callgrind-out-file=${dir}/cg.out`],
        readyTimeoutMs: 600_000,
      },
    );
    const key = (await createAccount(gateway, uniqueEmail('icount'), 1_000_000)).key;
    const counts = new Map<string, number>();
    for (const name of CASES) {
      const t = target(name, gateway.url, key);
      await countedRequests(t, CONNECTIONS, WARM, t.status);
      await control(gateway, '-z');
      await countedRequests(t, CONNECTIONS, CALLS, t.status);
      // What the calls left for after their answers (the access log's flush) is theirs too.
      await Bun.sleep(500);
      counts.set(name, (await dumpTotal(gateway, dir)) / CALLS);
      log(`${root}: ${name} ${(counts.get(name) ?? 0).toFixed(0)} instructions per call`);
    }
    return counts;
  } finally {
    await gateway?.stop('SIGKILL');
    await dropTestDatabases([modeEnv.DATABASE_URL ?? '']);
    await rm(dir, { recursive: true, force: true });
  }
}

const here = resolve(import.meta.dir, '..');
const roots = AGAINST ? [resolve(AGAINST), here] : [here];
const runs = new Map<string, Array<Map<string, number>>>(roots.map((r) => [r, []]));
for (let pair = 0; pair < PAIRS; pair++) for (const root of roots) runs.get(root)?.push(await measure(root));

const fmt = (n: number) => Math.round(n).toLocaleString('en');
console.log(
  `\nInstructions per call (callgrind, every thread of the gateway), ${CALLS} calls after ${WARM}, ${CONNECTIONS} connection(s)\n`,
);
console.log('| case | checkout | each run | mean |');
console.log('| --- | --- | --- | --- |');
for (const name of CASES)
  for (const root of roots) {
    const each = (runs.get(root) ?? []).map((m) => m.get(name) ?? Number.NaN);
    const mean = each.reduce((a, b) => a + b, 0) / each.length;
    console.log(
      `| ${name} | ${root === here ? 'this checkout' : root} | ${each.map(fmt).join(' / ')} | ${fmt(mean)} |`,
    );
  }

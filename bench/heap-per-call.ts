/**
 * JavaScript heap bytes allocated per call, read from JavaScriptCore's own GC log: what a CPU
 * profile spreads over a hundred frames (allocation, then the collections it brings) shows here
 * as one figure per path. Prints Markdown tables (figures, not a test).
 *
 *   bun run bench/heap-per-call.ts [--calls 20000] [--cases client-json,client-stream,fetch-json,fetch-stream,gateway-json,gateway-stream]
 *
 * Each case runs twice in a child process with `BUN_JSC_logGC=1`, once with `--calls` calls and
 * once with five times as many, and ends each with a full collection; the collector logs the
 * bytes allocated in every cycle, and their sums' difference over the extra calls is the heap a
 * call allocates once warm (start-up, the JIT's warm-up and the cycle left open cancel out).
 *
 * Cases: `client-*` a call through the gateway's own upstream client (`http1Fetch`), `fetch-*`
 * the same through Bun's `fetch` (its allocations are native and mostly do not show: the
 * figure is a floor, not a comparison), both against the zero-latency fake upstream of bench/lib
 * (a JSON answer, or a 23-event stream), 16 at a time, the body read with `text()`;
 * `gateway-*` the whole gateway in process (bench/in-process.ts, cases `relayed` and
 * `relayed-stream`: key, body, hold, upstream call, stream pipeline, settlement, records),
 * which needs the Postgres and Redis of the tests. Bytes outside JavaScriptCore's heap (a
 * socket's own buffers, `fetch`'s) are not counted.
 */
import { resolve } from 'node:path';
import { http1Fetch } from '../providers/common/http1/http1-fetch.ts';
import { numberArg, stringArg } from './lib/cli-args.ts';
import { heapAllocated } from './lib/gc-log.ts';
import { spawnPortPrinter } from './lib/spawn-port-printer.ts';

const ALL = ['client-json', 'client-stream', 'fetch-json', 'fetch-stream', 'gateway-json', 'gateway-stream'] as const;
type Case = (typeof ALL)[number];
const CALLS = numberArg('--calls', 20_000);
const CASES = stringArg('--cases', ALL.join(','))
  .split(',')
  .filter((c): c is Case => (ALL as readonly string[]).includes(c));
const CHILD = stringArg('--child', '');
const CONCURRENCY = 16;

if (CHILD) {
  // One case's calls, then a full collection so the last cycle is logged too.
  const port = numberArg('--port', 0);
  const stream = CHILD.endsWith('stream');
  const url = `http://127.0.0.1:${port}/v1/chat/completions`;
  const init = {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer bench' },
    body: JSON.stringify({ model: 'bench', messages: [{ role: 'user', content: 'hi' }], stream }),
  };
  const one = async () => {
    const response = CHILD.startsWith('fetch') ? await fetch(url, init) : await http1Fetch(url, init);
    await response.text();
  };
  for (let done = 0; done < CALLS; done += CONCURRENCY) await Promise.all(Array.from({ length: CONCURRENCY }, one));
  Bun.gc(true);
  process.exit(0);
}

function command(c: Case, calls: number, port: number): string[] {
  if (c.startsWith('gateway')) {
    const inProcess = resolve(import.meta.dir, 'in-process.ts');
    const which = c === 'gateway-json' ? 'relayed' : 'relayed-stream';
    return [process.execPath, inProcess, '--cases', which, '--rounds', '1', '--requests', String(calls)];
  }
  return [process.execPath, import.meta.path, '--child', c, '--calls', String(calls), '--port', String(port)];
}

const upstream = await spawnPortPrinter(resolve(import.meta.dir, 'lib/fake-openai-upstream.ts'), 'fake upstream');
const rows: string[] = [];
try {
  for (const c of CASES) {
    const few = await heapAllocated(command(c, CALLS, upstream.port));
    const many = await heapAllocated(command(c, CALLS * 5, upstream.port));
    const extra = CALLS * 4;
    const kb = (many.bytes - few.bytes) / extra / 1024;
    const cycles = ((many.cycles - few.cycles) / extra) * 1000;
    process.stderr.write(`${c}: ${kb.toFixed(1)} KB per call, ${cycles.toFixed(2)} collections per 1,000 calls\n`);
    rows.push(`| ${c} | ${kb.toFixed(1)} | ${cycles.toFixed(2)} |`);
  }
} finally {
  upstream.proc.kill();
}
console.log(`\n### Heap allocated per call (${CALLS} and ${CALLS * 5} calls per case; Bun ${Bun.version})\n`);
console.log('| case | heap KB per call | collections per 1,000 calls |\n| --- | --- | --- |');
for (const row of rows) console.log(row);

/**
 * What metrics and tracing add to one LLM call, in process: the hooks a call goes through
 * (request id and server span at arrival, one upstream attempt with its client span and
 * propagation headers, first token, settlement with tokens and cost, response header, request
 * metrics) timed per call against the same call without hooks. Tracing on exports over
 * OTLP/HTTP protobuf to a local receiver, as in production; tracing off loads no SDK.
 *
 *   bun run bench/observability.ts [--calls 20000]
 */
import { observeAttempt } from '../providers/common/upstream-observer.ts';
import type { CanonicalResponse } from '../translators/canonical/index.ts';
import { beginRequest, endRequest, inRequestScope, withRequestId } from '../src/observability/http-observer.ts';
import { LlmCallWatch } from '../src/observability/llm-call-observer.ts';
import { startTracing, tracing } from '../src/observability/tracing.ts';
import { numberArg } from './lib/cli-args.ts';

const calls = numberArg('--calls', 20_000);
const WARMUP = 2_000;

const response: CanonicalResponse = {
  id: 'resp_1',
  model: 'up-model',
  created: 0,
  content: [{ type: 'text', text: 'hello' }],
  finishReason: { unified: 'stop', raw: 'stop' },
  usage: { inputTokens: 1234, outputTokens: 24, totalTokens: 1258 },
};
const labels = {
  model: 'acme/chat',
  upstreamModel: 'up-model',
  provider: 'acme',
  providerKind: 'openai',
  clientFormat: 'chat-completions',
  stream: true,
};
const headers = {
  authorization: 'Bearer gw_x',
  'content-type': 'application/json',
  traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
};
const newRequest = () => new Request('http://127.0.0.1:8080/v1/chat/completions', { method: 'POST', headers });

/** The call without observability: what the hooks' cost is measured against. */
async function bare(request: Request): Promise<Response> {
  await (async () => request.headers.get('authorization'))();
  return new Response('{}');
}

async function observed(request: Request): Promise<Response> {
  const obs = beginRequest(request);
  return inRequestScope(obs, () => handled(request, obs));
}

async function handled(request: Request, obs: ReturnType<typeof beginRequest>): Promise<Response> {
  const watch = new LlmCallWatch(request, labels);
  await watch.upstream(async () => {
    const attempt = observeAttempt('POST', 'http://127.0.0.1:9/v1/chat/completions');
    attempt?.end({ status: 200 });
    return request.headers.get('authorization');
  });
  watch.answered();
  watch.firstToken();
  watch.settled('completed', response, 0.0012824);
  const res = withRequestId(new Response('{}'), obs);
  endRequest(request, obs, 200);
  return res;
}

async function measure(run: (r: Request) => Promise<Response>): Promise<{ p50: number; p99: number; mean: number }> {
  const requests = Array.from({ length: calls + WARMUP }, newRequest);
  const times: number[] = [];
  for (let i = 0; i < requests.length; i++) {
    const started = performance.now();
    await run(requests[i] as Request);
    if (i >= WARMUP) times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))] as number;
  return { p50: at(0.5), p99: at(0.99), mean: times.reduce((s, t) => s + t, 0) / times.length };
}

let exported = 0;
const receiver = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  async fetch(req) {
    exported += (await req.arrayBuffer()).byteLength;
    return new Response(new Uint8Array(), { headers: { 'content-type': 'application/x-protobuf' } });
  },
});

const rows: Array<[string, { p50: number; p99: number; mean: number }]> = [];
// Interleaved twice so drift of a shared machine shows rather than favours one row.
for (let round = 0; round < 2; round++) {
  rows.push(['no hooks', await measure(bare)]);
  rows.push(['metrics + request id, tracing off', await measure(observed)]);
}
if (tracing()) throw new Error('tracing must be off here');
process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${receiver.port}`;
const t = await startTracing({ protocol: 'http/protobuf', serviceName: 'bench' });
for (let round = 0; round < 2; round++) {
  rows.push(['no hooks', await measure(bare)]);
  rows.push(['metrics + request id + tracing (OTLP protobuf)', await measure(observed)]);
}
/**
 * CPU per call with every span exported: calls in bursts of 256, each burst's spans flushed
 * before the next, so the batch processor never drops one; process CPU time over the run,
 * against the same paced run with tracing's export replaced by nothing (tracing off).
 */
async function cpuPerCall(flush: () => Promise<void>): Promise<number> {
  const requests = Array.from({ length: calls }, newRequest);
  const before = process.cpuUsage();
  for (let i = 0; i < requests.length; i++) {
    await observed(requests[i] as Request);
    if (i % 256 === 255) await flush();
  }
  await flush();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / calls;
}
const exportedBefore = exported;
const cpuTraced = await cpuPerCall(() => t.flush());
const exportedPaced = exported - exportedBefore;
await t.shutdown();
const cpuUntraced = await cpuPerCall(async () => undefined);
receiver.stop(true);

const us = (ms: number) => (ms * 1000).toFixed(1);
console.log(`${calls} calls per row, times per call in µs\n`);
console.log('| hooks | p50 µs | p99 µs | mean µs | p50 added µs |');
console.log('| ----- | ------ | ------ | ------- | ------------ |');
for (let i = 0; i < rows.length; i++) {
  const [name, r] = rows[i] as [string, { p50: number; p99: number; mean: number }];
  const base = name === 'no hooks' ? r : (rows[i - 1]?.[1] ?? r);
  console.log(
    `| ${name} | ${us(r.p50)} | ${us(r.p99)} | ${us(r.mean)} | ${name === 'no hooks' ? '—' : us(r.p50 - base.p50)} |`,
  );
}
console.log(
  `\nCPU per call, every span exported (${(exportedPaced / 1024).toFixed(0)} KiB): tracing on ${cpuTraced.toFixed(1)} µs, tracing off ${cpuUntraced.toFixed(1)} µs (the receiver's own parsing included)`,
);

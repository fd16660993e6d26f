/**
 * A zero-latency fake OpenAI-compatible upstream for benchmarks, run as its own process:
 *
 *   bun run bench/lib/fake-openai-upstream.ts      (PORT=0 picks a free port)
 *
 * Prints one JSON line `{"port": N}` on stdout once it listens on 127.0.0.1.
 *
 * POST /v1/chat/completions
 *   - `stream` absent/false: one fixed `chat.completion` JSON with usage.
 *   - `stream: true`: a realistic SSE sequence — role chunk, 20 content deltas, finish chunk,
 *     usage chunk with `choices: []`, `data: [DONE]` — sent chunked, all at once.
 *   - slow mode, when the `model` contains "slow" or the query has `?slow=1`: 10 content deltas
 *     spaced SLOW_DELTA_MS (default 1000 ms) apart, so a stream lasts about 10 s. The role chunk
 *     goes out at once so headers and the first byte are not delayed.
 *   - paced mode, when the `model` contains "paced": the fast stream's events each written on its
 *     own, PACED_EVENT_MS (default 1 ms) apart, as a real LLM sends tokens: the gateway then reads,
 *     decodes and writes once per event instead of once per stream.
 */
import { CREATED, streamEvents, usage, words } from './fake-chat-stream.ts';

const DELTAS = 20;
const SLOW_DELTAS = 10;
const SLOW_DELTA_MS = Number(process.env.SLOW_DELTA_MS ?? 1000);
const PACED_EVENT_MS = Number(process.env.PACED_EVENT_MS ?? 1);
const enc = new TextEncoder();

const completionBody = (model: string) =>
  JSON.stringify({
    id: 'chatcmpl-bench0001',
    object: 'chat.completion',
    created: CREATED,
    model,
    system_fingerprint: 'fp_bench',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: words.slice(0, DELTAS).join(' '), refusal: null },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage: usage(DELTAS),
  });

/** Pre-encoded fast responses per model name (the gateway always sends the same one). */
const fastCache = new Map<string, { json: string; sse: Uint8Array[] }>();
function fast(model: string) {
  let hit = fastCache.get(model);
  if (!hit) {
    const ev = streamEvents(model, DELTAS);
    hit = { json: completionBody(model), sse: [ev.first, ...ev.deltas, ...ev.tail].map((s) => enc.encode(s)) };
    fastCache.set(model, hit);
  }
  return hit;
}

const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };

function slowStream(model: string, signal: AbortSignal): ReadableStream<Uint8Array> {
  const ev = streamEvents(model, SLOW_DELTAS);
  const queue = [...ev.deltas, ...ev.tail];
  let timer: ReturnType<typeof setTimeout> | undefined;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(enc.encode(ev.first));
      const next = () => {
        const item = queue.shift();
        if (item === undefined) return controller.close();
        controller.enqueue(enc.encode(item));
        // content deltas are spaced out; the finish, usage and [DONE] chunks follow the last one at once
        timer = setTimeout(next, queue.length > ev.tail.length ? SLOW_DELTA_MS : 0);
      };
      timer = setTimeout(next, SLOW_DELTA_MS);
      signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
    },
    cancel() {
      clearTimeout(timer);
    },
  });
}

/** Each event its own write, PACED_EVENT_MS after the one before. */
function pacedStream(parts: Uint8Array[], signal: AbortSignal): ReadableStream<Uint8Array> {
  let next = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (next > 0) await Bun.sleep(PACED_EVENT_MS);
      if (signal.aborted || next >= parts.length) return controller.close();
      controller.enqueue(parts[next++] as Uint8Array);
    },
  });
}

// TLS_CERT_FILE and TLS_KEY_FILE: HTTPS, as a real provider speaks (tests/helpers/self-signed-cert.ts).
const tls = process.env.TLS_CERT_FILE
  ? { cert: Bun.file(process.env.TLS_CERT_FILE), key: Bun.file(process.env.TLS_KEY_FILE ?? '') }
  : undefined;

const server = Bun.serve({
  port: Number(process.env.PORT ?? 0),
  hostname: '127.0.0.1',
  idleTimeout: 60,
  tls,
  async fetch(req) {
    const url = new URL(req.url);
    if (req.method === 'GET' && url.pathname === '/healthz') return new Response('ok');
    if (req.method !== 'POST' || url.pathname !== '/v1/chat/completions')
      return new Response('not found', { status: 404 });
    let body: { model?: unknown; stream?: unknown };
    try {
      body = (await req.json()) as typeof body;
    } catch {
      return Response.json({ error: { message: 'bad json', type: 'invalid_request_error' } }, { status: 400 });
    }
    const model = typeof body.model === 'string' ? body.model : 'bench';
    if (body.stream !== true)
      return new Response(fast(model).json, { headers: { 'content-type': 'application/json' } });
    if (model.includes('slow') || url.searchParams.get('slow') === '1')
      return new Response(slowStream(model, req.signal), { headers: SSE_HEADERS });
    const parts = fast(model).sse;
    if (model.includes('paced')) return new Response(pacedStream(parts, req.signal), { headers: SSE_HEADERS });
    return new Response(
      new ReadableStream<Uint8Array>({
        start(controller) {
          for (const p of parts) controller.enqueue(p);
          controller.close();
        },
      }),
      { headers: SSE_HEADERS },
    );
  },
});

console.log(JSON.stringify({ port: server.port }));
for (const sig of ['SIGTERM', 'SIGINT'] as const)
  process.on(sig, () => {
    server.stop(true);
    process.exit(0);
  });

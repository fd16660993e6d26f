/**
 * A webhook receiver for benchmarks, run as its own process:
 *
 *   bun run bench/lib/webhook-receiver.ts      (PORT=0 picks a free port)
 *
 * Prints one JSON line `{"port": N}` on stdout once it listens on 127.0.0.1.
 *
 *   POST /hook   reads the body, counts it, answers 200 `ok`
 *   GET /count   `{"count": N, "bytes": B}` — webhooks received so far
 */
let count = 0;
let bytes = 0;

const server = Bun.serve({
  port: Number(process.env.PORT ?? 0),
  hostname: '127.0.0.1',
  idleTimeout: 60,
  async fetch(req) {
    const url = new URL(req.url);
    if (req.method === 'POST' && url.pathname === '/hook') {
      bytes += (await req.arrayBuffer()).byteLength;
      count++;
      return new Response('ok');
    }
    if (req.method === 'GET' && url.pathname === '/count') return Response.json({ count, bytes });
    return new Response('not found', { status: 404 });
  },
});

console.log(JSON.stringify({ port: server.port }));
for (const sig of ['SIGTERM', 'SIGINT'] as const)
  process.on(sig, () => {
    server.stop(true);
    process.exit(0);
  });

export {};

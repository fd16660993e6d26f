/**
 * The floor a relaying gateway cannot go below on this machine: a bare Bun server that forwards
 * each POST to the upstream with `fetch` and streams the answer back, with nothing else (no
 * auth, parsing, billing or records), and answers a GET itself with a small JSON body. Run as its own process, pinned like the gateway, so its
 * CPU per call under the same load is the HTTP work any Bun proxy pays (bench/hot-path.ts).
 *
 *   UPSTREAM=http://127.0.0.1:N PORT=0 bun run bench/lib/bare-proxy.ts
 *
 * Prints one JSON line `{"port": N}` on stdout once it listens on 127.0.0.1.
 */
const upstream = process.env.UPSTREAM;
if (!upstream) throw new Error('UPSTREAM is required');

const proxy = Bun.serve({
  hostname: '127.0.0.1',
  port: Number(process.env.PORT ?? 0),
  async fetch(req) {
    // A GET is answered here, without the upstream: the floor of serving a request at all.
    if (req.method === 'GET') return Response.json({ status: 'ok' });
    const url = new URL(req.url);
    const res = await fetch(`${upstream}${url.pathname}`, {
      method: req.method,
      headers: { 'content-type': req.headers.get('content-type') ?? 'application/json' },
      body: await req.arrayBuffer(),
    });
    return new Response(res.body, {
      status: res.status,
      headers: { 'content-type': res.headers.get('content-type') ?? 'application/json' },
    });
  },
});
console.log(JSON.stringify({ port: proxy.port }));
export {};

import { rememberClientAddress } from '../http/client-address.ts';
import { useIdleControl } from '../http/client-idle.ts';
import { corsPreflight, withCors } from '../http/cors.ts';
import { loggedPath } from '../http/request-path.ts';
import { bodyFullyRead, hasRequestBody, LLM_BODY_MAX_BYTES } from '../http/request-body.ts';
import { beginRequest, endRequest, inRequestScope, withRequestId } from '../observability/http-observer.ts';
import { maxRequestBytes } from '../uploads/upload-request.ts';
import type { App } from './build-app.ts';
import type { AppContext } from './context.ts';

/** Above the largest cap, so a body crossing a route's cap is refused by the route, in its shape. */
const BODY_SIZE_HEADROOM = 1024 * 1024;

/**
 * Bun's own ceiling on request bodies: the largest body any route takes — an upload of
 * `MAX_UPLOAD_BYTES` as base64 JSON (uploads stream, under their own limit), or an LLM request —
 * plus a little headroom. Every route's own, smaller cap is enforced as its body arrives
 * (src/http/request-body.ts); Bun answers a bare 413 to anything declaring more than this.
 */
export function maxRequestBodySize(maxUploadBytes: number): number {
  const largest = Math.max(
    LLM_BODY_MAX_BYTES,
    maxRequestBytes({ kind: 'json' }, maxUploadBytes),
    maxRequestBytes({ kind: 'multipart', boundary: '' }, maxUploadBytes),
  );
  return largest + BODY_SIZE_HEADROOM;
}

/**
 * An error answered before the request's body was read to its end: the connection is closed
 * after the answer, so the rest of the body is never read (and cannot be taken for the next
 * request on the connection).
 */
function closingIfBodyUnread(request: Request, response: Response): Response {
  if (response.status < 400 || !hasRequestBody(request) || bodyFullyRead(request)) return response;
  try {
    response.headers.set('connection', 'close');
    return response;
  } catch {
    // Immutable headers (a fetched response): copy them.
    const headers = new Headers(response.headers);
    headers.set('connection', 'close');
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
  }
}

/** What the request handler needs of the server: the peer's address (`Server.requestIP`). */
export interface PeerSource {
  requestIP(request: Request): { address: string } | null;
}

/**
 * The gateway's handling of one request around the Elysia app: one JSON log line per request
 * (written in batches by the logger) with its `x-request-id`, its metrics and span
 * (src/observability/), and a count of in-flight requests so shutdown can wait for them. Each
 * request's client address is recorded for the failed-authentication throttle. Apart from
 * `serve` so that a benchmark can run it without sockets (bench/in-process.ts).
 */
export function requestHandler(ctx: AppContext, app: App) {
  const handle = app.fetch;
  const trustProxy = ctx.env.trustProxy;
  let inFlight = 0;
  return {
    inFlight: () => inFlight,
    async fetch(request: Request, server: PeerSource): Promise<Response> {
      const started = performance.now();
      const observed = beginRequest(request);
      inFlight++;
      let status = 500;
      try {
        rememberClientAddress(request, () => server.requestIP(request)?.address, trustProxy);
        const answer = corsPreflight(request) ?? (await inRequestScope(observed, () => handle(request)));
        const response = withCors(request, withRequestId(closingIfBodyUnread(request, answer), observed));
        status = response.status;
        return response;
      } finally {
        inFlight--;
        endRequest(request, observed, status);
        ctx.log.info('request', {
          method: request.method,
          path: loggedPath(request.url),
          status,
          request_id: observed.requestId,
          duration_ms: Math.round((performance.now() - started) * 100) / 100,
          account_id: ctx.requestAccount.get(request) ?? null,
        });
      }
    },
  };
}

/** Bun.serve with the gateway's request handler (`requestHandler`). */
export function serve(ctx: AppContext, app: App) {
  const handler = requestHandler(ctx, app);
  const server = Bun.serve({
    port: ctx.env.port,
    hostname: ctx.env.host,
    // Several workers listen on one port; the kernel spreads new connections between them.
    // Off with one process, so a second gateway started on a taken port still fails loudly.
    reusePort: ctx.env.workers > 1,
    // Streams (LLM SSE, downloads) can be long; Bun's default 10 s idle timeout would cut them.
    // Request bodies of the JSON routes have their own, shorter deadline (BODY_TIMEOUT_MS). An
    // LLM call lifts it while it waits on its upstream (src/http/client-idle.ts).
    idleTimeout: ctx.env.clientIdleTimeoutS,
    maxRequestBodySize: maxRequestBodySize(ctx.env.maxUploadBytes),
    fetch: handler.fetch,
  });
  useIdleControl(server, ctx.env.clientIdleTimeoutS);
  return {
    server,
    inFlight: handler.inFlight,
    /**
     * Stops accepting, then waits for in-flight requests and the answers they still stream,
     * bounded by `graceMs`: a handler returns a streamed answer's Response at once, so its
     * count alone said nothing of an SSE stream still running, and a 40 s stream held the
     * shutdown 37 s past the grace (past a Kubernetes grace period, so flushes never ran).
     */
    async stop(graceMs = 10_000): Promise<void> {
      const closing = server.stop(false);
      const deadline = Date.now() + graceMs;
      while (handler.inFlight() > 0 && Date.now() < deadline) await Bun.sleep(20);
      const closed = await Promise.race([
        closing.then(() => true),
        Bun.sleep(Math.max(0, deadline - Date.now())).then(() => false),
      ]);
      if (!closed) server.stop(true);
      await closing;
    },
  };
}

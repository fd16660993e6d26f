import type { App } from './build-app.ts';
import type { AppContext } from './context.ts';

/**
 * Bun.serve around the Elysia app: one JSON log line per request (written in batches by the
 * logger), and a count of in-flight requests so shutdown can wait for them.
 */
export function serve(ctx: AppContext, app: App) {
  const handle = app.fetch;
  let inFlight = 0;
  const server = Bun.serve({
    port: ctx.env.port,
    hostname: ctx.env.host,
    // Streams (LLM SSE, downloads) can be long; Bun's default 10 s idle timeout would cut them.
    idleTimeout: 255,
    maxRequestBodySize: 1024 * 1024 * 1024 * 4,
    async fetch(request) {
      const started = performance.now();
      inFlight++;
      let status = 500;
      try {
        const response = await handle(request);
        status = response.status;
        return response;
      } finally {
        inFlight--;
        const url = request.url;
        const pathStart = url.indexOf('/', url.indexOf('//') + 2);
        const queryStart = url.indexOf('?', pathStart);
        ctx.log.info('request', {
          method: request.method,
          path: queryStart === -1 ? url.slice(pathStart) : url.slice(pathStart, queryStart),
          status,
          duration_ms: Math.round((performance.now() - started) * 100) / 100,
          account_id: ctx.requestAccount.get(request) ?? null,
        });
      }
    },
  });
  return {
    server,
    inFlight: () => inFlight,
    /** Stops accepting, then waits for in-flight requests (bounded by `graceMs`). */
    async stop(graceMs = 10_000): Promise<void> {
      const closing = server.stop(false);
      const deadline = Date.now() + graceMs;
      while (inFlight > 0 && Date.now() < deadline) await Bun.sleep(20);
      if (inFlight > 0) server.stop(true);
      await closing;
    },
  };
}

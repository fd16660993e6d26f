import { Elysia } from 'elysia';
import { bearerMatches, hashApiKey } from '../auth/api-keys.ts';
import { unauthorized } from '../http/errors.ts';
import { registry } from './metrics.ts';

/**
 * `GET /metrics`: the Prometheus text exposition of src/observability/metrics.ts. Open when
 * `METRICS_TOKEN` is unset (bind the port privately then); with it, `Authorization: Bearer
 * <token>` is required, compared by hash so its length and bytes do not leak through timing.
 * `text` is the whole host's exposition when it runs several workers (docs/scaling.md).
 */
export function metricsRoutes(token: string | undefined, text: () => Promise<string> = () => registry.metrics()) {
  const tokenHash = token === undefined ? undefined : hashApiKey(token);
  return new Elysia({ name: 'metrics' }).get('/metrics', async ({ request }) => {
    if (tokenHash && !bearerMatches(request, tokenHash)) throw unauthorized('invalid or missing metrics token');
    return new Response(await text(), { headers: { 'content-type': registry.contentType } });
  });
}

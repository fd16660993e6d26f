import { Elysia } from 'elysia';
import { pingDatabase } from '../db/ping.ts';
import { bearerMatches, hashApiKey } from '../auth/api-keys.ts';
import type { AppContext } from '../app/context.ts';
import type { Provider } from '../../providers/types.ts';
import { providerStatuses } from '../upstreams/provider-status.ts';
import type { Router } from '../routing/router.ts';

async function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `/healthz`: the process answers. `/readyz`: the database and the store answer too; it also
 * lists each provider as ok, unconfigured or failing, and each model's deployments with their
 * shared health, which inform but never decide readiness. With `METRICS_TOKEN` set, those
 * details (upstream and database error text, the providers, the deployments) are the token's
 * to read, as the metrics are: a probe without it gets the status and each check's `ok`.
 */
export function healthRoutes(ctx: AppContext, providers: ReadonlyMap<string, Provider> = new Map(), router?: Router) {
  const tokenHash = ctx.env.metricsToken === undefined ? undefined : hashApiKey(ctx.env.metricsToken);
  const mayReadDetails = (request: Request) => !tokenHash || bearerMatches(request, tokenHash);
  return new Elysia({ name: 'health' })
    .get('/healthz', () => ({ status: 'ok' }))
    .get('/readyz', async ({ set, request }) => {
      const check = async (work: () => Promise<unknown>) => {
        try {
          await within(2000, work());
          return { ok: true };
        } catch (err) {
          return { ok: false, error: (err as Error).message };
        }
      };
      const [database, store] = await Promise.all([
        check(() => pingDatabase(ctx.db)),
        check(async () => {
          if (!(await ctx.store.ping())) throw new Error('ping failed');
        }),
      ]);
      const ready = database.ok && store.ok;
      set.status = ready ? 200 : 503;
      if (!mayReadDetails(request))
        return {
          status: ready ? 'ready' : 'not_ready',
          checks: { database: { ok: database.ok }, store: { ok: store.ok } },
        };
      return {
        status: ready ? 'ready' : 'not_ready',
        checks: { database: { kind: ctx.dbKind, ...database }, store: { kind: ctx.store.kind, ...store } },
        providers: providerStatuses(ctx.config.providers, providers),
        // Each model's deployments: ok, degraded (recent failures) or cooling_down (docs/routing.md).
        ...(router ? { deployments: router.states() } : {}),
      };
    });
}

import { Elysia } from 'elysia';
import type { AppContext } from '../app/context.ts';
import { authPlugin } from '../auth/auth-plugin.ts';
import { envelope } from '../http/envelope.ts';
import type { Router } from '../routing/router.ts';

/**
 * `GET /v1/routing`: each model's deployments with their shared health (docs/routing.md), for
 * the dashboard's models page. Any key may read it: it names providers, never credentials.
 */
export function routingRoutes(ctx: AppContext, router: Router) {
  return new Elysia({ name: 'routing' })
    .use(authPlugin(ctx))
    .get('/v1/routing', () => envelope({ models: router.states() }));
}

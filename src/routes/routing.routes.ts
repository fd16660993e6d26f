import { Elysia } from 'elysia';
import type { AppContext } from '../app/context.ts';
import { authPlugin } from '../auth/auth-plugin.ts';
import { envelope } from '../http/envelope.ts';
import type { Router } from '../routing/router.ts';

/**
 * `GET /v1/routing`: each model's deployments with their shared health (docs/routing.md), for
 * the dashboard's models page. Any key of any account may read it, so it names providers and
 * states, never credentials nor the upstream's error text: a provider's 429 names the operator's
 * organisation (`/readyz` shows `last_error` to the operator).
 */
export function routingRoutes(ctx: AppContext, router: Router) {
  return new Elysia({ name: 'routing' })
    .use(authPlugin(ctx))
    .get('/v1/routing', () => envelope({ models: withoutErrors(router.states()) }));
}

function withoutErrors(models: ReturnType<Router['states']>) {
  return Object.fromEntries(
    Object.entries(models).map(([id, deployments]) => [
      id,
      deployments.map(({ last_error: _hidden, ...shown }) => shown),
    ]),
  );
}

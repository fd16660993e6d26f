import { Elysia } from 'elysia';
import { errorHandler } from '../http/error-handler.ts';
import { accountRoutes } from '../routes/account.routes.ts';
import { adminRoutes } from '../routes/admin.routes.ts';
import { healthRoutes } from '../routes/health.routes.ts';
import { modelRoutes } from '../routes/models.routes.ts';
import { openApiRoutes } from '../routes/openapi.routes.ts';
import type { AppContext } from './context.ts';

/** The whole HTTP surface: error mapping first, then one module per route group. */
export function buildApp(ctx: AppContext) {
  return new Elysia()
    .use(errorHandler(ctx.log))
    .use(healthRoutes(ctx))
    .use(openApiRoutes())
    .use(adminRoutes(ctx))
    .use(modelRoutes(ctx))
    .use(accountRoutes(ctx));
}

export type App = ReturnType<typeof buildApp>;

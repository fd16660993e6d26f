import { Elysia } from 'elysia';
import { motionErrorShapers } from '../resources/motion-error.ts';
import { adminGuard } from '../auth/admin-guard.ts';
import { bodyErrorHandler } from '../http/body-error-handler.ts';
import { errorHandler } from '../http/error-handler.ts';
import { accountRoutes } from '../routes/account.routes.ts';
import { fileRoutes } from '../routes/files.routes.ts';
import { adminRoutes } from '../routes/admin.routes.ts';
import { dashboardRoutes } from '../routes/dashboard.routes.ts';
import { healthRoutes } from '../routes/health.routes.ts';
import { keyRoutes } from '../routes/keys.routes.ts';
import { providerWebhookRoutes } from '../routes/provider-webhooks.routes.ts';
import { countTokensRoutes } from '../routes/count-tokens.routes.ts';
import { embeddingRoutes } from '../routes/embeddings.routes.ts';
import { llmErrorShapers, llmRoutes } from '../routes/llm.routes.ts';
import { modelRoutes } from '../routes/models.routes.ts';
import { openApiRoutes } from '../routes/openapi.routes.ts';
import { resourceRoutes } from '../routes/resources.routes.ts';
import { taskRoutes } from '../routes/tasks.routes.ts';
import { uploadRoutes } from '../routes/upload.routes.ts';
import { metricsRoutes } from '../observability/metrics-route.ts';
import { routeTemplates } from '../observability/route-template.ts';
import type { Provider } from '../../providers/types.ts';
import type { AppContext } from './context.ts';
import type { EmbeddingService } from '../embeddings/embedding-service.ts';
import type { TokenCountService } from '../llm/count-tokens.ts';
import type { LlmService } from '../llm/llm-service.ts';
import type { Router } from '../routing/router.ts';
import { routingRoutes } from '../routes/routing.routes.ts';
import type { TaskService } from '../tasks/task-service.ts';
import type { TaskCanceller } from '../tasks/task-cancel.ts';
import type { TaskEvents } from '../tasks/task-events.ts';
import type { WebhookDeliverer } from '../webhooks/webhook-deliverer.ts';

/**
 * The whole HTTP surface: error mapping first, then one module per route group. Modules with
 * request bodies authenticate before reading them and read them within limits: authPlugin for
 * the API, adminGuard in front of the admin routes, the sign-in route on its own.
 */
export function buildApp(
  ctx: AppContext,
  services: {
    providers: ReadonlyMap<string, Provider>;
    /** Deployment health for `/readyz` (docs/routing.md). */
    router?: Router;
    llm: LlmService;
    embeddings: EmbeddingService;
    tokenCount: TokenCountService;
    tasks: TaskService;
    webhooks: WebhookDeliverer;
    /** The media task runner, woken when an upstream's webhook makes a task due. */
    runner?: { wake(): void };
    canceller: TaskCanceller;
    events: TaskEvents;
  },
  opts: {
    /** `GET /metrics` text; the whole host's with several workers (src/cluster/cluster-metrics.ts). */
    metricsText?: () => Promise<string>;
  } = {},
) {
  const motionProducts = new Set(
    [...services.providers.values()].flatMap((p) =>
      p.resources?.listMotions && p.resources.motionProduct ? [p.resources.motionProduct] : [],
    ),
  );
  // Elysia's default reads the path from the 11th character of the URL on, assuming a host of
  // at least four (`http://a.bc`): behind `http://llm/…` (a service name on port 80) no route
  // matched. The server speaks plain HTTP, so the path starts after `http://`, whatever the host.
  return new Elysia({ handler: { standardHostname: false } })
    .use(routeTemplates())
    .use(bodyErrorHandler(llmErrorShapers))
    .use(errorHandler(ctx.log, [...llmErrorShapers, ...motionErrorShapers(motionProducts)]))
    .use(healthRoutes(ctx, services.providers, services.router))
    .use(metricsRoutes(ctx.env.metricsToken, opts.metricsText))
    .use(providerWebhookRoutes(ctx, services.providers, () => services.runner?.wake()))
    .use(fileRoutes(ctx))
    .use(uploadRoutes(ctx))
    .use(openApiRoutes())
    .use(new Elysia({ name: 'admin-guarded' }).use(adminGuard(ctx)).use(adminRoutes(ctx)))
    .use(modelRoutes(ctx))
    .use(services.router ? routingRoutes(ctx, services.router) : new Elysia({ name: 'routing-off' }))
    .use(accountRoutes(ctx))
    .use(keyRoutes(ctx))
    .use(dashboardRoutes(ctx))
    .use(taskRoutes(ctx, services))
    .use(resourceRoutes(ctx, { providers: services.providers }))
    .use(countTokensRoutes(ctx, services.tokenCount))
    .use(llmRoutes(ctx, services.llm))
    .use(embeddingRoutes(ctx, services.embeddings));
}

export type App = ReturnType<typeof buildApp>;

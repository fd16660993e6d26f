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
import { llmErrorShapers, llmRoutes } from '../routes/llm.routes.ts';
import { modelRoutes } from '../routes/models.routes.ts';
import { openApiRoutes } from '../routes/openapi.routes.ts';
import { resourceRoutes } from '../routes/resources.routes.ts';
import { taskRoutes } from '../routes/tasks.routes.ts';
import { uploadRoutes } from '../routes/upload.routes.ts';
import type { Provider } from '../../providers/types.ts';
import type { AppContext } from './context.ts';
import type { LlmService } from '../llm/llm-service.ts';
import type { TaskService } from '../tasks/task-service.ts';
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
    llm: LlmService;
    tasks: TaskService;
    webhooks: WebhookDeliverer;
  },
) {
  const motionProducts = new Set(
    [...services.providers.values()].flatMap((p) =>
      p.resources?.listMotions && p.resources.motionProduct ? [p.resources.motionProduct] : [],
    ),
  );
  return new Elysia()
    .use(bodyErrorHandler(llmErrorShapers))
    .use(errorHandler(ctx.log, [...llmErrorShapers, ...motionErrorShapers(motionProducts)]))
    .use(healthRoutes(ctx, services.providers))
    .use(providerWebhookRoutes(ctx, services.providers))
    .use(fileRoutes(ctx))
    .use(uploadRoutes(ctx))
    .use(openApiRoutes())
    .use(new Elysia({ name: 'admin-guarded' }).use(adminGuard(ctx)).use(adminRoutes(ctx)))
    .use(modelRoutes(ctx))
    .use(accountRoutes(ctx))
    .use(keyRoutes(ctx))
    .use(dashboardRoutes(ctx))
    .use(taskRoutes(ctx, services.tasks, services.webhooks))
    .use(resourceRoutes(ctx, { providers: services.providers }))
    .use(llmRoutes(ctx, services.llm));
}

export type App = ReturnType<typeof buildApp>;

import type { Provider } from '../../providers/types.ts';
import type { OutputStore } from '../tasks/keep-task-outputs.ts';
import { CustomVoicesRepository } from '../resources/custom-voices.repository.ts';
import { MediaRegistry } from '../tasks/media-registry.ts';
import { TaskAdmitter } from '../tasks/task-admission.ts';
import { TaskCanceller } from '../tasks/task-cancel.ts';
import { TaskEvents } from '../tasks/task-events.ts';
import { TaskRunner } from '../tasks/task-runner.ts';
import { TaskService } from '../tasks/task-service.ts';
import { checkCallbackUrlAtCreation, sendWebhook } from '../webhooks/callback-url-policy.ts';
import { WebhookDeliverer } from '../webhooks/webhook-deliverer.ts';
import type { AppContext } from './context.ts';

const TASK_LEASE_MS = 15_000;

export interface TaskServices {
  tasks: TaskService;
  runner: TaskRunner;
  webhooks: WebhookDeliverer;
  canceller: TaskCanceller;
  /** Task changes across instances, for `GET /v1/tasks/{id}/events`. */
  events: TaskEvents;
}

/**
 * The media task pipeline: creation (validate, price, batched charge), the durable runner, and
 * webhook delivery, all on the shared Postgres so any instance can pick up any work.
 */
export function createTaskServices(
  ctx: AppContext,
  providers: ReadonlyMap<string, Provider>,
  outputs: OutputStore,
  /** Each model's fallbacks (docs/routing.md); none when absent. */
  routing?: { fallbacks(modelId: string): readonly string[] },
): TaskServices {
  const { env, db, log } = ctx;
  const registry = new MediaRegistry(ctx.catalog, providers);
  const events = new TaskEvents(ctx.store, log);
  const customVoices = new CustomVoicesRepository(db);
  const webhooks = new WebhookDeliverer(db, sendWebhook(env.allowPrivateUrls), log, {
    instanceId: env.instanceId,
    retryDelaysSec: env.webhookRetryDelays,
  });
  const runner = new TaskRunner(
    db,
    registry,
    outputs,
    (task, refunded) => {
      if (refunded) void ctx.accounts.changed(task.account_id);
      if (task.callback_url) webhooks.wake();
      events.changed(task.id);
    },
    log,
    {
      instanceId: env.instanceId,
      concurrency: env.taskConcurrency,
      leaseMs: TASK_LEASE_MS,
      fallbacks: routing?.fallbacks,
      customVoices,
      onBalanceMoved: (accountId) => void ctx.accounts.changed(accountId),
    },
  );
  const tasks = new TaskService(
    registry,
    new TaskAdmitter(db, ctx.accounts, ctx.log),
    checkCallbackUrlAtCreation(env.allowPrivateUrls),
    () => runner.wake(),
    customVoices,
  );
  const canceller = new TaskCanceller(
    db,
    registry,
    (task) => {
      void ctx.accounts.changed(task.account_id);
      if (task.callback_url) webhooks.wake();
      events.changed(task.id);
    },
    log,
  );
  return { tasks, runner, webhooks, canceller, events };
}

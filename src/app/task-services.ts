import type { MediaOutput, Provider } from '../../providers/types.ts';
import { safeFetch } from '../net/safe-fetch.ts';
import { checkUrl } from '../net/address-guard.ts';
import { UnsafeUrlError } from '../net/net-errors.ts';
import { CustomVoicesRepository } from '../resources/custom-voices.repository.ts';
import { MediaRegistry } from '../tasks/media-registry.ts';
import { TaskAdmitter } from '../tasks/task-admission.ts';
import { TaskRunner } from '../tasks/task-runner.ts';
import { TaskService } from '../tasks/task-service.ts';
import { WebhookDeliverer } from '../webhooks/webhook-deliverer.ts';
import type { AppContext } from './context.ts';

/** How long a delivery may take: the spec advises receivers to answer within 5 s; we wait 10. */
const WEBHOOK_TIMEOUT_MS = 10_000;
const TASK_LEASE_MS = 15_000;

export interface TaskServices {
  tasks: TaskService;
  runner: TaskRunner;
  webhooks: WebhookDeliverer;
}

/**
 * The media task pipeline: creation (validate, price, batched charge), the durable runner, and
 * webhook delivery, all on the shared Postgres so any instance can pick up any work.
 */
export function createTaskServices(ctx: AppContext, providers: ReadonlyMap<string, Provider>, saveOutput: (task: { id: string; accountId: number }, output: MediaOutput, signal: AbortSignal) => Promise<string>): TaskServices {
  const { env, db, log } = ctx;
  const registry = new MediaRegistry(ctx.catalog, providers);
  const webhooks = new WebhookDeliverer(
    db,
    async (url, body, headers) => {
      // Re-checked at send time (DNS may have changed since creation); redirects are not followed.
      const res = await safeFetch(url, { method: 'POST', body, headers }, { allowPrivate: env.allowPrivateUrls, field: 'callback_url', timeoutMs: WEBHOOK_TIMEOUT_MS, followRedirects: false, maxBytes: 64 * 1024 });
      await res.body?.cancel().catch(() => undefined);
      return { status: res.status, statusText: res.statusText || String(res.status) };
    },
    log,
    { instanceId: env.instanceId, retryDelaysSec: env.webhookRetryDelays },
  );
  const runner = new TaskRunner(
    db,
    registry,
    saveOutput,
    (task, refunded) => {
      if (refunded) void ctx.accounts.changed(task.account_id);
      if (task.callback_url) webhooks.wake();
    },
    log,
    { instanceId: env.instanceId, concurrency: env.taskConcurrency, leaseMs: TASK_LEASE_MS },
  );
  const tasks = new TaskService(
    registry,
    new TaskAdmitter(db, ctx.accounts, ctx.log),
    async (url) => {
      try {
        await checkUrl(url, { allowPrivate: env.allowPrivateUrls, field: 'callback_url' });
      } catch (err) {
        // A name that does not resolve right now may well later (a DNS hiccup must not fail the
        // task); the check at send time is the one that counts, and logs such a failure.
        if (!(err instanceof UnsafeUrlError && err.reason === 'unresolvable')) throw err;
      }
    },
    () => runner.wake(),
    new CustomVoicesRepository(db),
  );
  return { tasks, runner, webhooks };
}

import { Elysia } from 'elysia';
import { SSE_HEADERS } from '../http/answer-headers.ts';
import { requestIdOf } from '../observability/http-observer.ts';
import type { AppContext } from '../app/context.ts';
import { authPlugin, credentialsCheck } from '../auth/auth-plugin.ts';
import { envelope } from '../http/envelope.ts';
import { forbidden, notFound, tooManyRequests } from '../http/errors.ts';
import { OpenStreams } from '../tasks/open-streams.ts';
import { modelAllowed, modelNotAllowedMessage } from '../keys/key-policy.ts';
import { idempotencyKey, REPLAYED_HEADER } from '../http/idempotency-key.ts';
import { parseCreateTask, parseLegacyGenerate } from '../tasks/create-request.ts';
import { findIdempotentReplay, type TaskService } from '../tasks/task-service.ts';
import { scheduleRedelivery } from '../webhooks/redeliver.ts';
import type { WebhookDeliverer } from '../webhooks/webhook-deliverer.ts';
import { parseTaskListQuery } from '../tasks/list-query.ts';
import { attemptView, taskView } from '../tasks/task-view.ts';
import { findTask, isTaskId, listTasks } from '../tasks/tasks.repository.ts';
import { callbackLogs } from '../webhooks/callback-attempts.repository.ts';
import { omitEmpty } from '../http/envelope.ts';
import type { TaskCanceller } from '../tasks/task-cancel.ts';
import type { TaskEvents } from '../tasks/task-events.ts';
import { taskEventStream } from '../tasks/task-event-stream.ts';
import type { TaskRow } from '../db/tables/tasks.table.ts';
import type { CreateTaskRequest } from '../tasks/create-request.ts';
import type { AuthContext } from '../auth/key-cache.ts';

const catalogCategory = (ctx: AppContext) => (id: string) => ctx.catalog.get(id)?.object.category;

interface TaskServicesForRoutes {
  tasks: TaskService;
  webhooks: WebhookDeliverer;
  canceller: TaskCanceller;
  events: TaskEvents;
}

/**
 * Tasks (docs/api-contract.md): create, the list with its filters and pagination, one task by id,
 * its live status stream, cancel, callback redelivery, and
 * the legacy per-model `POST /{model-slug}/generate` (the model id with `/` written as `-`, e.g.
 * `/sandbox-image/generate`, or the bare model name when no other provider has it).
 */
export function taskRoutes(ctx: AppContext, { tasks, webhooks, canceller, events }: TaskServicesForRoutes) {
  const openStreams = new OpenStreams(ctx.env.taskEventsMaxStreamsPerAccount);
  const view = async (row: TaskRow) => {
    const logs = row.callback_url ? await callbackLogs(ctx.db, [row.id]) : new Map();
    return taskView(row, logs.get(row.id) ?? [], ctx.catalog);
  };
  /** A retried create answers the task its key already made, as it is now; otherwise validates and admits. */
  const create = async (
    auth: AuthContext,
    req: CreateTaskRequest,
    request: Request,
    resolve: () => ReturnType<TaskService['resolve']>,
    set: { headers: Record<string, string | number> },
  ) => {
    const key = idempotencyKey(request.headers);
    const replay = await findIdempotentReplay(ctx.db, auth.accountId, req, key);
    if (replay) {
      // The key is the account's: a key kept to other models may not read the task through it.
      if (auth.policy && !modelAllowed(auth.policy.models, replay.model))
        throw forbidden(modelNotAllowedMessage(replay.model));
      Object.assign(set.headers, REPLAYED_HEADER);
      return envelope(await view(replay));
    }
    const created = await tasks.create(auth, req, resolve(), key, requestIdOf(request));
    if (!('replayed' in created)) return envelope(created);
    Object.assign(set.headers, REPLAYED_HEADER);
    const { replayed: _, ...body } = created;
    return envelope(body);
  };

  const legacy = new Elysia({ name: 'tasks-legacy' })
    .use(authPlugin(ctx))
    .post('/:slug/generate', async ({ auth, body, params, request, set }) => {
      const model = tasks.registry.bySlug(params.slug ?? '');
      if (!model) throw notFound(`no model for /${params.slug}/generate`);
      const req = parseLegacyGenerate(model.ref.id, body);
      return create(auth, req, request, () => model, set);
    });

  const current = new Elysia({ name: 'tasks', prefix: '/v1/tasks' })
    .use(authPlugin(ctx))
    .post('', async ({ auth, body, request, set }) => {
      const req = parseCreateTask(body);
      return create(auth, req, request, () => tasks.resolve(req.model, catalogCategory(ctx)), set);
    })
    .get('', async ({ auth, query }) => {
      const { page, pageSize, filter } = parseTaskListQuery(query);
      const { rows, total } = await listTasks(ctx.db, auth.accountId, filter, {
        limit: pageSize,
        offset: (page - 1) * pageSize,
      });
      const logs = await callbackLogs(
        ctx.db,
        rows.filter((r) => r.callback_url).map((r) => r.id),
      );
      const totalPages = Math.ceil(total / pageSize);
      return {
        ...envelope(rows.map((row) => taskView(row, logs.get(row.id) ?? [], ctx.catalog))),
        pagination: {
          page,
          page_size: pageSize,
          total,
          total_pages: totalPages,
          has_next: page < totalPages,
          has_previous: page > 1,
        },
      };
    })
    .get('/:task_id', async ({ auth, params }) => {
      // Another account's task is as unknown as a made-up id.
      const row = await findTask(ctx.db, auth.accountId, params.task_id);
      if (!row) throw notFound(`task ${params.task_id} not found`);
      return envelope(await view(row));
    })
    // Live status (docs/api-contract.md, "Live task status"): the record at once, on every change, then the end.
    .get('/:task_id/events', async ({ auth, params, request }) => {
      const taskId = params.task_id;
      if (!(await findTask(ctx.db, auth.accountId, taskId))) throw notFound(`task ${taskId} not found`);
      if (!openStreams.tryOpen(auth.accountId))
        throw tooManyRequests(
          `too many open task event streams: at most ${ctx.env.taskEventsMaxStreamsPerAccount} per account; close one, or poll GET /v1/tasks/{id}`,
          1,
        );
      const signedIn = credentialsCheck(ctx, request, auth);
      const body = taskEventStream({
        onEnd: () => openStreams.close(auth.accountId),
        // Each change and heartbeat asks again whether the key still stands: revoking it (or
        // ending the session) ends the stream, which would otherwise show the task to its end.
        read: async () => {
          if (!(await signedIn())) return undefined;
          return events.shareRead(taskId, `${auth.accountId}:${taskId}`, async () => {
            const row = await findTask(ctx.db, auth.accountId, taskId);
            return row ? omitEmpty(await view(row)) : undefined;
          });
        },
        watch: (onChange) => events.watch(taskId, onChange),
        heartbeatMs: ctx.env.taskEventsHeartbeatMs,
        signal: AbortSignal.any([request.signal, events.shutdown]),
      });
      return new Response(body, { headers: SSE_HEADERS });
    })
    .post('/:task_id/cancel', async ({ auth, params, set }) => {
      const { warnings } = await canceller.cancel(auth.accountId, params.task_id);
      if (warnings.length) set.headers['x-gateway-warnings'] = JSON.stringify(warnings).replace(/[^\x20-\x7e]/g, '?');
      const row = await findTask(ctx.db, auth.accountId, params.task_id);
      if (!row) throw notFound(`task ${params.task_id} not found`);
      return envelope(await view(row));
    })
    // one more attempt, answered with its new log entry; 409 once the log holds 10.
    .post('/:task_id/callbacks/redeliver', async ({ auth, params, set }) => {
      // An id no task can have is not looked up (the request-target guard refuses NUL first).
      if (!isTaskId(params.task_id)) throw notFound(`task ${params.task_id} not found`);
      const deliveryId = await scheduleRedelivery(ctx.db, auth.accountId, params.task_id, ctx.env.instanceId);
      const result = await webhooks.deliverNow(deliveryId);
      if (!result) {
        // Its lease ran out before this instance sent it (a slow database): the delivery loop
        // of some instance has it and sends it. Scheduled, not lost; asking again would add another.
        set.status = 202;
        return envelope({ scheduled: true }, 202);
      }
      return envelope(attemptView({ sent_at: result.sentAt, status: result.status, status_text: result.statusText }));
    });

  return new Elysia().use(current).use(legacy);
}

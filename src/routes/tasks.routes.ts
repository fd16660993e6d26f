import { Elysia } from 'elysia';
import type { AppContext } from '../app/context.ts';
import { authPlugin } from '../auth/auth-plugin.ts';
import { envelope } from '../http/envelope.ts';
import { notFound } from '../http/errors.ts';
import { parseTaskListQuery } from '../tasks/list-query.ts';
import { taskView } from '../tasks/task-view.ts';
import { callbackLogs, findTask, listTasks } from '../tasks/tasks.repository.ts';

/** Reading tasks (spec "Tasks"): the list with its filters and pagination, and one task by id. */
export function taskRoutes(ctx: AppContext) {
  return new Elysia({ name: 'tasks', prefix: '/v1/tasks' })
    .use(authPlugin(ctx))
    .get('', async ({ auth, query }) => {
      const { page, pageSize, filter } = parseTaskListQuery(query);
      const { rows, total } = await listTasks(ctx.db, auth.accountId, filter, { limit: pageSize, offset: (page - 1) * pageSize });
      const logs = await callbackLogs(ctx.db, rows.filter((r) => r.callback_url).map((r) => r.id));
      const totalPages = Math.ceil(total / pageSize);
      return {
        ...envelope(rows.map((row) => taskView(row, logs.get(row.id) ?? [], ctx.catalog))),
        pagination: { page, page_size: pageSize, total, total_pages: totalPages, has_next: page < totalPages, has_previous: page > 1 },
      };
    })
    .get('/:task_id', async ({ auth, params }) => {
      // Another account's task is as unknown as a made-up id.
      const row = await findTask(ctx.db, auth.accountId, params.task_id);
      if (!row) throw notFound(`task ${params.task_id} not found`);
      const logs = row.callback_url ? await callbackLogs(ctx.db, [row.id]) : new Map();
      return envelope(taskView(row, logs.get(row.id) ?? [], ctx.catalog));
    });
}

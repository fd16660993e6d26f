import { sql } from 'kysely';
import type { DbOrTrx } from '../db/database.ts';
import type { CallbackAttemptRow } from '../db/tables/callbacks.table.ts';
import type { TaskRow, TaskStatus } from '../db/tables/tasks.table.ts';

/** The filters of `GET /v1/tasks`, already validated. */
export interface TaskFilter {
  status?: TaskStatus;
  model?: string;
  categories?: string[];
  providers?: string[];
  createdAfter?: Date;
  createdBefore?: Date;
}

/** One page of an account's tasks, newest first (ties broken by creation order), and the total. */
export async function listTasks(
  db: DbOrTrx,
  accountId: number,
  filter: TaskFilter,
  page: { limit: number; offset: number },
): Promise<{ rows: TaskRow[]; total: number }> {
  let query = db.selectFrom('tasks').where('account_id', '=', accountId);
  if (filter.status) query = query.where('status', '=', filter.status);
  if (filter.model) query = query.where('model', '=', filter.model);
  if (filter.categories?.length) query = query.where('category', 'in', filter.categories);
  if (filter.providers?.length) query = query.where('provider', 'in', filter.providers);
  if (filter.createdAfter) query = query.where('created_at', '>=', filter.createdAfter);
  if (filter.createdBefore) query = query.where('created_at', '<=', filter.createdBefore);
  // The total rides on each row (one query, one snapshot), so page and total always agree.
  const found = await query
    .selectAll()
    .select(sql<string>`count(*) over ()`.as('total_count'))
    .orderBy('created_at', 'desc')
    .orderBy('seq', 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
  if (found.length === 0 && page.offset > 0) {
    const count = await query.select((eb) => eb.fn.countAll<string>().as('total')).executeTakeFirstOrThrow();
    return { rows: [], total: Number(count.total) };
  }
  const total = Number(found[0]?.total_count ?? 0);
  return { rows: found.map(({ total_count: _, ...row }) => row), total };
}

export async function findTask(db: DbOrTrx, accountId: number, taskId: string): Promise<TaskRow | undefined> {
  return db.selectFrom('tasks').selectAll().where('id', '=', taskId).where('account_id', '=', accountId).executeTakeFirst();
}

/** Delivery logs of several tasks at once, in attempt order, keyed by task id. */
export async function callbackLogs(db: DbOrTrx, taskIds: string[]): Promise<Map<string, CallbackAttemptRow[]>> {
  const logs = new Map<string, CallbackAttemptRow[]>();
  if (taskIds.length === 0) return logs;
  const rows = await db.selectFrom('callback_attempts').selectAll().where('task_id', 'in', taskIds).orderBy('task_id').orderBy('id').execute();
  for (const row of rows) {
    const list = logs.get(row.task_id) ?? [];
    list.push(row);
    logs.set(row.task_id, list);
  }
  return logs;
}

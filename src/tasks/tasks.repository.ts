import { sql } from 'kysely';
import type { DbOrTrx } from '../db/database.ts';
import type { TaskRow, TaskStatus } from '../db/tables/tasks.table.ts';
import { isStorableString } from '../http/hostile-json.ts';

/** Longest id a task can have (ours are UUIDs; LLM task ids are shorter still). */
const MAX_TASK_ID_LENGTH = 255;

/** Could `id` name a task at all? False for anything Postgres cannot hold or no task id is. */
export function isTaskId(id: unknown): id is string {
  return typeof id === 'string' && id.length > 0 && id.length <= MAX_TASK_ID_LENGTH && isStorableString(id);
}

/** The filters of `GET /v1/tasks`, already validated. */
export interface TaskFilter {
  status?: TaskStatus;
  model?: string;
  categories?: string[];
  providers?: string[];
  /** The API key that created the tasks (docs/keys.md). */
  keyId?: number;
  /**
   * Whole Unix seconds, both inclusive: a task created at 12.7 s is found by `createdAfter` 12
   * and by `createdBefore` 12, as the task's own `created_at` (12) reads.
   */
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
  if (filter.keyId !== undefined) query = query.where('key_id', '=', filter.keyId);
  if (filter.createdAfter) query = query.where('created_at', '>=', filter.createdAfter);
  // Rows keep sub-second times: "up to and including second T" is "before T + 1 s", computed by
  // Postgres (a JS Date of the largest bound, year 10000, has no ISO form PGlite accepts).
  if (filter.createdBefore)
    query = query.where('created_at', '<', sql<Date>`to_timestamp(${filter.createdBefore.getTime() / 1000 + 1})`);
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
  // An id Postgres could not even compare (NUL, or no string at all) names no task.
  if (!isTaskId(taskId)) return undefined;
  return db
    .selectFrom('tasks')
    .selectAll()
    .where('id', '=', taskId)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
}

/** How long an `Idempotency-Key` names its task; admission releases older keys. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 3600 * 1000;

/** The account's task created under `key` within the idempotency window, as it is now. */
export async function findTaskByIdempotencyKey(
  db: DbOrTrx,
  accountId: number,
  key: string,
): Promise<TaskRow | undefined> {
  const row = await db
    .selectFrom('tasks')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('idempotency_key', '=', key)
    .executeTakeFirst();
  if (!row || Date.now() - row.created_at.getTime() > IDEMPOTENCY_WINDOW_MS) return undefined;
  return row;
}

/** Every row holding one of `keys`, whatever its age (admission decides what is stale). */
export async function findTasksByIdempotencyKeys(trx: DbOrTrx, keys: Array<{ accountId: number; key: string }>) {
  if (keys.length === 0) return [];
  return trx
    .selectFrom('tasks')
    .select(['id', 'account_id', 'idempotency_key', 'request_hash', 'created_at'])
    .where((eb) =>
      eb.or(keys.map((k) => eb.and([eb('account_id', '=', k.accountId), eb('idempotency_key', '=', k.key)]))),
    )
    .execute();
}

/** Frees the keys of old tasks so they can name new ones. */
export async function releaseIdempotencyKeys(trx: DbOrTrx, taskIds: string[]): Promise<void> {
  if (taskIds.length)
    await trx.updateTable('tasks').set({ idempotency_key: null }).where('id', 'in', taskIds).execute();
}

/** Locks tasks' rows in id order (so two lockers never deadlock) until the transaction ends. */
export async function lockTasks(trx: DbOrTrx, taskIds: string[]): Promise<void> {
  if (taskIds.length === 0) return;
  await trx
    .selectFrom('tasks')
    .select('id')
    .where('id', 'in', [...taskIds].sort())
    .orderBy('id')
    .forUpdate()
    .execute();
}

/** An account's task, locked until the transaction ends, with what its callback needs. */
export async function lockTaskOfAccount(trx: DbOrTrx, accountId: number, taskId: string) {
  return trx
    .selectFrom('tasks')
    .select(['id', 'status', 'callback_url', 'output', 'error_message'])
    .where('id', '=', taskId)
    .where('account_id', '=', accountId)
    .forUpdate()
    .executeTakeFirst();
}

/** Which of `ids` have a task row: one indexed lookup per thousand ids. */
export async function existingTaskIds(db: DbOrTrx, ids: readonly string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (let i = 0; i < ids.length; i += 1000) {
    const rows = await db
      .selectFrom('tasks')
      .select('id')
      .where('id', 'in', ids.slice(i, i + 1000))
      .execute();
    for (const row of rows) found.add(row.id);
  }
  return found;
}

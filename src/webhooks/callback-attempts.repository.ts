import type { DbOrTrx } from '../db/database.ts';
import type { CallbackAttemptRow } from '../db/tables/callbacks.table.ts';

/** One attempt made, as the task's `callback_result` log shows it. */
export interface AttemptMade {
  taskId: string;
  sentAt: Date;
  /** HTTP status, 0 when no HTTP answer came. */
  status: number;
  statusText: string;
  trigger: 'auto' | 'manual';
}

/** The longest status text kept: a receiver's reason phrase is its own, and may be long. */
const MAX_STATUS_TEXT = 500;

/** Appends attempts to their tasks' logs, in one statement. */
export async function appendAttempts(trx: DbOrTrx, attempts: AttemptMade[]): Promise<void> {
  if (attempts.length === 0) return;
  await trx
    .insertInto('callback_attempts')
    .values(
      attempts.map((a) => ({
        task_id: a.taskId,
        sent_at: a.sentAt,
        status: a.status,
        status_text: a.statusText.slice(0, MAX_STATUS_TEXT),
        trigger: a.trigger,
      })),
    )
    .execute();
}

/** Delivery logs of several tasks at once, in attempt order, keyed by task id. */
export async function callbackLogs(db: DbOrTrx, taskIds: string[]): Promise<Map<string, CallbackAttemptRow[]>> {
  const logs = new Map<string, CallbackAttemptRow[]>();
  if (taskIds.length === 0) return logs;
  const rows = await db
    .selectFrom('callback_attempts')
    .selectAll()
    .where('task_id', 'in', taskIds)
    .orderBy('task_id')
    .orderBy('id')
    .execute();
  for (const row of rows) {
    const list = logs.get(row.task_id) ?? [];
    list.push(row);
    logs.set(row.task_id, list);
  }
  return logs;
}

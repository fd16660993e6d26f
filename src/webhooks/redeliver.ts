import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { conflict, notFound, unprocessable } from '../http/errors.ts';
import { completedPayload, failedPayload } from '../tasks/task-output.ts';

/** The API contract's cap on a task's delivery log, automatic and manual attempts together. */
export const MAX_CALLBACK_ATTEMPTS = 10;

/**
 * Schedules one manual delivery of a finished task's callback, claimed by this instance so it
 * is sent at once. The task row is locked while attempts are counted (made and still pending),
 * so concurrent redeliveries can never push the log past 10.
 */
export async function scheduleRedelivery(db: Db, accountId: number, taskId: string, instanceId: string): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const task = await trx
      .selectFrom('tasks')
      .select(['id', 'status', 'callback_url', 'output', 'error_message'])
      .where('id', '=', taskId)
      .where('account_id', '=', accountId)
      .forUpdate()
      .executeTakeFirst();
    if (!task) throw notFound(`task ${taskId} not found`);
    if (!task.callback_url) throw unprocessable('the task has no callback_url to deliver to');
    if (task.status === 'processing') throw conflict('the task is still processing; its callback is sent when it finishes');
    const counts = await trx
      .selectFrom('webhook_deliveries')
      .select([
        sql<string>`count(*) filter (where state = 'done')`.as('made'),
        sql<string>`count(*) filter (where state = 'pending')`.as('pending'),
      ])
      .where('task_id', '=', taskId)
      .executeTakeFirstOrThrow();
    const used = Number(counts.made) + Number(counts.pending);
    if (used >= MAX_CALLBACK_ATTEMPTS) throw conflict(`the callback log is full (${MAX_CALLBACK_ATTEMPTS} attempts); no more deliveries can be made`);
    const payload = task.status === 'completed' ? completedPayload(task.id, task.output) : failedPayload(task.id, task.error_message ?? 'task failed');
    const row = await trx
      .insertInto('webhook_deliveries')
      .values({
        task_id: taskId,
        attempt_no: used + 1,
        trigger: 'manual',
        due_at: sql`now()`,
        state: 'pending',
        payload: JSON.stringify(payload),
        // Claimed by this instance from the start: the background deliverer leaves it alone.
        lease_owner: instanceId,
        lease_expires_at: sql`now() + interval '30 seconds'`,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return Number(row.id);
  });
}

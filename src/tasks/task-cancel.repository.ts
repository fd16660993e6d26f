import { sql } from 'kysely';
import type { DbOrTrx } from '../db/database.ts';
import type { TaskStatus } from '../db/tables/tasks.table.ts';

/** A task as its cancel found it, locked: what the refund and the upstream cancel need. */
export interface CancellableTask {
  id: string;
  account_id: number;
  model: string;
  category: string | null;
  status: TaskStatus;
  input: unknown;
  operation: unknown;
  cost_usd: string;
  callback_url: string | null;
  /** A step holds the task right now (its lease has not expired). */
  leased: boolean;
}

/**
 * The account's task, locked until the transaction ends. Taking the row lock first makes a
 * cancel and the runner's finish (`markTaskFinished`, conditioned on `processing`) queue up on
 * the same row: whichever commits second sees the first one's status and changes nothing.
 */
export async function lockTaskForCancel(
  trx: DbOrTrx,
  accountId: number,
  taskId: string,
): Promise<CancellableTask | undefined> {
  const result = await sql<CancellableTask>`
    select id, account_id, model, category, status, input, operation, cost_usd, callback_url,
      (lease_owner is not null and lease_expires_at > now()) as leased
    from tasks where id = ${taskId} and account_id = ${accountId} for update`.execute(trx);
  return result.rows[0];
}

/**
 * Ends a locked, processing task as `cancelled` with nothing charged. False when it was not
 * processing. The lease is left alone: a step still running cannot finish the task (its finish
 * requires `processing`), but its release still stores the upstream handle it got, which the
 * cancel then uses to stop that job; no claim ever takes a cancelled task again.
 */
export async function markTaskCancelled(trx: DbOrTrx, taskId: string): Promise<boolean> {
  const updated = await trx
    .updateTable('tasks')
    .set({
      status: 'cancelled',
      cost_usd: '0',
      output: null,
      error_message: null,
      finished_at: sql`now()`,
      updated_at: sql`now()`,
    })
    .where('id', '=', taskId)
    .where('status', '=', 'processing')
    .returning('id')
    .executeTakeFirst();
  return updated !== undefined;
}

/** A cancelled task's upstream handle as a step left it, and whether a step still holds the task. */
export async function readCancelledOperation(
  db: DbOrTrx,
  taskId: string,
): Promise<{ operation: unknown; leased: boolean } | undefined> {
  const result = await sql<{ operation: unknown; leased: boolean }>`
    select operation, (lease_owner is not null and lease_expires_at > now()) as leased
    from tasks where id = ${taskId} and status = 'cancelled'`.execute(db);
  return result.rows[0];
}

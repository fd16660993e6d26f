import { sql } from 'kysely';
import { applyLedgerMovement } from '../accounts/ledger.repository.ts';
import { fromUnits, toUnits } from '../accounts/money.ts';
import type { DbOrTrx } from '../db/database.ts';
import { completedPayload, failedPayload } from './task-output.ts';

export interface ClaimedTask {
  id: string;
  account_id: number;
  model: string;
  category: string | null;
  input: unknown;
  operation: unknown;
  attempts: number;
  cost_usd: string;
  callback_url: string | null;
  created_at: Date;
}

export type Ending =
  | { status: 'completed'; output: Record<string, unknown>; finalUnits: bigint }
  | { status: 'failed'; message: string; detail?: unknown };

/**
 * Moves a task out of `processing`, once: only while it is still processing and this instance
 * holds its lease. In the same transaction the unused or whole charge is refunded and the first
 * webhook delivery is scheduled, so a finish, its money and its callback never come apart.
 * Returns false when the task had already been finished (or taken over) elsewhere.
 */
export async function finishTask(trx: DbOrTrx, task: ClaimedTask, owner: string, ending: Ending): Promise<{ refunded: boolean } | false> {
  const charged = toUnits(task.cost_usd);
  const finalUnits = ending.status === 'completed' ? (ending.finalUnits < charged ? ending.finalUnits : charged) : 0n;
  const updated = await trx
    .updateTable('tasks')
    .set({
      status: ending.status,
      output: ending.status === 'completed' ? JSON.stringify(ending.output) : null,
      error_message: ending.status === 'failed' ? ending.message : null,
      error_detail: ending.status === 'failed' && ending.detail !== undefined ? JSON.stringify(ending.detail) : null,
      cost_usd: fromUnits(finalUnits),
      finished_at: sql`now()`,
      updated_at: sql`now()`,
      lease_owner: null,
      lease_expires_at: null,
    })
    .where('id', '=', task.id)
    .where('status', '=', 'processing')
    .where('lease_owner', '=', owner)
    .returning('finished_at')
    .executeTakeFirst();
  if (!updated) return false;

  const refund = charged - finalUnits;
  if (refund > 0n) {
    await applyLedgerMovement(trx, {
      accountId: task.account_id,
      amountUsd: Number(fromUnits(refund)),
      kind: 'refund',
      taskId: task.id,
      category: task.category,
      note: ending.status === 'failed' ? 'failed task' : 'unused part of the charge',
    });
  }
  if (task.callback_url) {
    const payload = ending.status === 'completed' ? completedPayload(task.id, ending.output) : failedPayload(task.id, ending.message);
    await trx
      .insertInto('webhook_deliveries')
      .values({ task_id: task.id, attempt_no: 1, trigger: 'auto', due_at: sql`now()`, state: 'pending', payload: JSON.stringify(payload), lease_owner: null, lease_expires_at: null })
      .execute();
  }
  return { refunded: refund > 0n };
}

import { applyLedgerMovement } from '../accounts/ledger.repository.ts';
import { fromUnits, minUnits, toUnits, type UsdUnits } from '../accounts/money.ts';
import type { DbOrTrx } from '../db/database.ts';
import { storableString, toStorable } from '../http/hostile-json.ts';
import { refundKeySpend } from '../keys/api-keys.repository.ts';
import { scheduleDelivery } from '../webhooks/deliveries.repository.ts';
import { type ClaimedTask, markTaskFinished } from './task-queue.repository.ts';
import { completedPayload, failedPayload } from './task-output.ts';

export type Ending =
  | { status: 'completed'; output: Record<string, unknown>; final: UsdUnits }
  | { status: 'failed'; message: string; detail?: unknown };

/**
 * A failure's text and detail come from the upstream: anything Postgres cannot hold (a NUL, half a
 * surrogate pair, nesting past `MAX_JSON_DEPTH`) is replaced, or the finish would fail on every
 * retry until the task's deadline.
 */
function storableEnding(ending: Ending): Ending {
  if (ending.status !== 'failed') return ending;
  const message = storableString(ending.message);
  return ending.detail === undefined
    ? { ...ending, message }
    : { ...ending, message, detail: toStorable(ending.detail) };
}

/**
 * Moves a task out of `processing`, once: only while it is still processing and this instance
 * holds its lease. In the same transaction the unused or whole charge is refunded and the first
 * webhook delivery is scheduled, so a finish, its money and its callback never come apart.
 * Returns false when the task had already been finished (or taken over) elsewhere.
 */
export async function finishTask(
  trx: DbOrTrx,
  task: ClaimedTask,
  owner: string,
  given: Ending,
): Promise<{ refunded: boolean } | false> {
  const ending = storableEnding(given);
  const charged = toUnits(task.cost_usd);
  // A task never costs more than it was charged up front: a higher final price is the gateway's loss.
  const cost = ending.status === 'completed' ? minUnits(ending.final, charged) : 0n;
  const finished = await markTaskFinished(trx, task.id, owner, { ...ending, costUsd: fromUnits(cost) });
  if (!finished) return false;

  const refund = charged - cost;
  if (refund > 0n) {
    await applyLedgerMovement(trx, {
      accountId: task.account_id,
      amount: refund,
      kind: 'refund',
      taskId: task.id,
      category: task.category,
      note: ending.status === 'failed' ? 'failed task' : 'unused part of the charge',
    });
    await refundKeySpend(trx, task.id, refund);
  }
  if (task.callback_url) {
    const payload =
      ending.status === 'completed' ? completedPayload(task.id, ending.output) : failedPayload(task.id, ending.message);
    await scheduleDelivery(trx, { taskId: task.id, attemptNo: 1, trigger: 'auto', payload });
  }
  return { refunded: refund > 0n };
}

import type { Db } from '../db/database.ts';
import type { TaskStatus } from '../db/tables/tasks.table.ts';
import { conflict, notFound, unprocessable } from '../http/errors.ts';
import { lockTaskOfAccount } from '../tasks/tasks.repository.ts';
import { cancelledPayload, completedPayload, failedPayload } from '../tasks/task-output.ts';
import { countDeliveries, scheduleDelivery } from './deliveries.repository.ts';
import { DELIVERY_LEASE_MS, MAX_CALLBACK_ATTEMPTS } from './delivery-policy.ts';

/**
 * Schedules one manual delivery of a finished task's callback, claimed by this instance so it
 * is sent at once. The task row is locked while attempts are counted (made and still pending),
 * so concurrent redeliveries can never push the log past its cap.
 */
export async function scheduleRedelivery(
  db: Db,
  accountId: number,
  taskId: string,
  instanceId: string,
): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const task = await lockTaskOfAccount(trx, accountId, taskId);
    if (!task) throw notFound(`task ${taskId} not found`);
    if (!task.callback_url) throw unprocessable('the task has no callback_url to deliver to');
    if (task.status === 'processing')
      throw conflict('the task is still processing; its callback is sent when it finishes');
    const { made, pending } = await countDeliveries(trx, taskId);
    const used = made + pending;
    if (used >= MAX_CALLBACK_ATTEMPTS)
      throw conflict(`the callback log is full (${MAX_CALLBACK_ATTEMPTS} attempts); no more deliveries can be made`);
    const payload = finishedPayload(task);
    return scheduleDelivery(trx, {
      taskId,
      attemptNo: used + 1,
      trigger: 'manual',
      payload,
      claimedBy: { owner: instanceId, leaseMs: DELIVERY_LEASE_MS },
    });
  });
}

/** The payload of a finished task's callback, as its first delivery sent it. */
function finishedPayload(task: { id: string; status: TaskStatus; output: unknown; error_message: string | null }) {
  switch (task.status) {
    case 'completed':
      return completedPayload(task.id, task.output);
    case 'failed':
      return failedPayload(task.id, task.error_message ?? 'task failed');
    case 'cancelled':
      return cancelledPayload(task.id);
    case 'processing':
      throw conflict('the task is still processing; its callback is sent when it finishes');
    default: {
      const exhaustive: never = task.status;
      throw new Error(`unknown task status ${String(exhaustive)}`);
    }
  }
}

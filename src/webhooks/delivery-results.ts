import type { DbOrTrx } from '../db/database.ts';
import { lockTasks } from '../tasks/tasks.repository.ts';
import { appendAttempts } from './callback-attempts.repository.ts';
import { type ClaimedDelivery, markDone, type Retry, scheduleRetries } from './deliveries.repository.ts';
import { delivered, MAX_CALLBACK_ATTEMPTS } from './delivery-policy.ts';

export interface DeliveryResult {
  delivery: ClaimedDelivery;
  sentAt: Date;
  /** HTTP status, 0 when no HTTP answer came. */
  status: number;
  statusText: string;
}

/**
 * The retry a failed automatic attempt earns: due at the task's finish plus the next delay, while
 * delays remain. Manual attempts are never retried; they are one more try the client asked for.
 */
function retryOf(r: DeliveryResult, retryDelaysSec: number[]): Retry | undefined {
  const { delivery } = r;
  if (delivered(r.status) || delivery.trigger !== 'auto' || delivery.attempt_no > retryDelaysSec.length)
    return undefined;
  return {
    taskId: delivery.task_id,
    attemptNo: delivery.attempt_no + 1,
    base: delivery.finished_at ?? r.sentAt,
    delaySec: retryDelaysSec[delivery.attempt_no - 1] ?? 0,
    payload: delivery.payload,
  };
}

/**
 * Records a set of attempts in one transaction: the log rows (`callback_result`), the deliveries
 * marked done, and the retries they earn — until the delays run out or the log is full. Returns
 * when each retry it may have scheduled is due (epoch ms), so the instance can look then.
 */
export async function recordResults(
  trx: DbOrTrx,
  results: DeliveryResult[],
  retryDelaysSec: number[],
): Promise<number[]> {
  if (results.length === 0) return [];
  await appendAttempts(
    trx,
    results.map((r) => ({
      taskId: r.delivery.task_id,
      sentAt: r.sentAt,
      status: r.status,
      statusText: r.statusText,
      trigger: r.delivery.trigger,
    })),
  );
  // Every send is logged (each happened); only the first result of a delivery schedules its retry.
  const moved = await markDone(
    trx,
    results.map((r) => r.delivery.id),
  );
  const retries = results
    .filter((r) => moved.has(r.delivery.id))
    .map((r) => retryOf(r, retryDelaysSec))
    .filter((r) => r !== undefined);
  if (retries.length === 0) return [];
  // The log's cap counts automatic and manual attempts together: under the same task row lock
  // redelivery takes, a retry is only scheduled while fewer than the cap are made or pending.
  await lockTasks(trx, [...new Set(retries.map((r) => r.taskId))]);
  await scheduleRetries(trx, retries, MAX_CALLBACK_ATTEMPTS);
  return retries.map((r) => r.base.getTime() + r.delaySec * 1000);
}

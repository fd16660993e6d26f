import { sql } from 'kysely';
import type { DbOrTrx } from '../db/database.ts';

/** One delivery as claimed, with what sending it needs. */
export interface ClaimedDelivery {
  id: number;
  task_id: string;
  attempt_no: number;
  trigger: 'auto' | 'manual';
  payload: unknown;
  callback_url: string | null;
  finished_at: Date | null;
  webhook_signing_enabled: boolean;
  webhook_secret: string | null;
}

export interface DeliveryResult {
  delivery: ClaimedDelivery;
  sentAt: Date;
  /** HTTP status, 0 when no HTTP answer came. */
  status: number;
  statusText: string;
}

export const delivered = (status: number) => status >= 200 && status < 300;

/**
 * Records a set of attempts in one transaction: the log rows (`callback_result`), the deliveries
 * marked done, and for each failed automatic attempt the next one, due at the task's finish plus
 * the next retry delay — until the delays run out.
 */
export async function recordResults(trx: DbOrTrx, results: DeliveryResult[], retryDelaysSec: number[]): Promise<void> {
  if (results.length === 0) return;
  await trx
    .insertInto('callback_attempts')
    .values(results.map((r) => ({ task_id: r.delivery.task_id, sent_at: r.sentAt, status: r.status, status_text: r.statusText.slice(0, 500), trigger: r.delivery.trigger })))
    .execute();
  await trx
    .updateTable('webhook_deliveries')
    .set({ state: 'done', lease_owner: null, lease_expires_at: null })
    .where('id', 'in', results.map((r) => r.delivery.id))
    .execute();
  const retries = results.filter((r) => !delivered(r.status) && r.delivery.trigger === 'auto' && r.delivery.attempt_no <= retryDelaysSec.length);
  if (retries.length === 0) return;
  await trx
    .insertInto('webhook_deliveries')
    .values(
      retries.map((r) => {
        const delaySec = retryDelaysSec[r.delivery.attempt_no - 1] ?? 0;
        const base = r.delivery.finished_at ?? r.sentAt;
        return {
          task_id: r.delivery.task_id,
          attempt_no: r.delivery.attempt_no + 1,
          trigger: 'auto' as const,
          due_at: sql<Date>`${base}::timestamptz + ${delaySec} * interval '1 second'`,
          state: 'pending' as const,
          payload: JSON.stringify(r.delivery.payload),
          lease_owner: null,
          lease_expires_at: null,
        };
      }),
    )
    .execute();
}

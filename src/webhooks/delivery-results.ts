import { sql } from 'kysely';
import type { DbOrTrx } from '../db/database.ts';
import { MAX_CALLBACK_ATTEMPTS } from './redeliver.ts';

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
 * the next retry delay — until the delays run out or the log is full.
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
  // The log's cap counts automatic and manual attempts together: under the same task row lock
  // redelivery takes, a retry is only scheduled while fewer than 10 are made or pending.
  const taskIds = [...new Set(retries.map((r) => r.delivery.task_id))].sort();
  await trx.selectFrom('tasks').select('id').where('id', 'in', taskIds).orderBy('id').forUpdate().execute();
  await sql`
    insert into webhook_deliveries (task_id, attempt_no, trigger, due_at, state, payload)
    select r.task_id, r.attempt_no, 'auto', r.base + r.delay_sec * interval '1 second', 'pending', r.payload
    from unnest(${retries.map((r) => r.delivery.task_id)}::text[], ${retries.map((r) => r.delivery.attempt_no + 1)}::int[],
                ${retries.map((r) => (r.delivery.finished_at ?? r.sentAt).toISOString())}::timestamptz[],
                ${retries.map((r) => retryDelaysSec[r.delivery.attempt_no - 1] ?? 0)}::int[],
                ${retries.map((r) => JSON.stringify(r.delivery.payload))}::jsonb[]) as r(task_id, attempt_no, base, delay_sec, payload)
    where (select count(*) from webhook_deliveries d where d.task_id = r.task_id) < ${MAX_CALLBACK_ATTEMPTS}`.execute(trx);
}

import type { Generated, Selectable } from 'kysely';
import type { CreatedAt, Timestamp } from './accounts.table.ts';
import type { Json } from './tasks.table.ts';

/** The delivery log shown as `callback_result`: one row per attempt made. */
export interface CallbackAttemptsTable {
  id: Generated<number>;
  task_id: string;
  sent_at: Date;
  status: number;
  status_text: string;
  trigger: 'auto' | 'manual';
  created_at: CreatedAt;
}

/** Deliveries still to make, claimed like tasks so they survive restarts. */
export interface WebhookDeliveriesTable {
  id: Generated<number>;
  task_id: string;
  attempt_no: number;
  trigger: 'auto' | 'manual';
  due_at: Timestamp;
  state: 'pending' | 'done';
  payload: Json;
  lease_owner: string | null;
  lease_expires_at: Date | null;
  created_at: CreatedAt;
  /** The task's account (migration 0015); null only on rows of instances from before it. */
  account_id: number | null;
}

export type CallbackAttemptRow = Selectable<CallbackAttemptsTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;

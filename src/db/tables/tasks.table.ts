import type { ColumnType, Generated, Selectable } from 'kysely';
import type { CreatedAt, GeneratedNumeric, Timestamp } from './accounts.table.ts';

export type Json = ColumnType<unknown, string, string>;
/** `processing` until exactly one of the three endings (docs/api-contract.md, "Task statuses"). */
export type TaskStatus = 'processing' | 'completed' | 'failed' | 'cancelled';
export const TASK_STATUSES = [
  'processing',
  'completed',
  'failed',
  'cancelled',
] as const satisfies readonly TaskStatus[];

export interface TasksTable {
  id: string;
  /** Tie-breaker for "newest first" among tasks created in the same second. */
  seq: Generated<number>;
  account_id: number;
  /** The API key that created it (null before keys were recorded). */
  key_id: ColumnType<number | null, number | null | undefined, number | null>;
  model: string;
  provider: string;
  category: string | null;
  status: TaskStatus;
  input: Json;
  output: Json | null;
  error_message: string | null;
  /** Structured upstream diagnostics of a failure: operational data, never shown to clients. */
  error_detail: Json | null;
  cost_usd: GeneratedNumeric;
  callback_url: string | null;
  idempotency_key: string | null;
  request_hash: string | null;
  /** The `x-request-id` of the call that made the task (migration 0006). */
  request_id: string | null;
  /** The opaque upstream job handle (start/poll), owned by the provider. */
  operation: Json | null;
  attempts: Generated<number>;
  /** Models a media task fell back from: `[{model, provider, error}]` (docs/routing.md). */
  route_attempts: Json | null;
  lease_owner: string | null;
  lease_expires_at: Date | null;
  run_after: Timestamp;
  created_at: CreatedAt;
  updated_at: Timestamp;
  finished_at: Date | null;
}

export type TaskRow = Selectable<TasksTable>;

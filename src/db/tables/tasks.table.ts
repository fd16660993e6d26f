import type { ColumnType, Generated, Selectable } from 'kysely';
import type { CreatedAt, GeneratedNumeric, Timestamp } from './accounts.table.ts';

export type Json = ColumnType<unknown, string, string>;
export type TaskStatus = 'processing' | 'completed' | 'failed';

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
  /** The opaque upstream job handle (start/poll), owned by the provider. */
  operation: Json | null;
  attempts: Generated<number>;
  lease_owner: string | null;
  lease_expires_at: Date | null;
  run_after: Timestamp;
  created_at: CreatedAt;
  updated_at: Timestamp;
  finished_at: Date | null;
}

export type TaskRow = Selectable<TasksTable>;

import type { ColumnType, Generated, Selectable } from 'kysely';
import type { CreatedAt, GeneratedNumeric, Numeric, Timestamp } from './accounts.table.ts';
import type { Json } from './tasks.table.ts';

export type BudgetPeriod = 'day' | 'week' | 'month';

export interface ApiKeysTable {
  id: Generated<number>;
  account_id: number;
  /** Lowercase hex SHA-256 of the whole key; the key itself is never stored. */
  key_hash: string;
  /** The first characters, to tell keys apart in logs and the dashboard. */
  key_prefix: string;
  name: Generated<string>;
  /** Null: no budget of its own (the account balance still applies). */
  budget_usd: Numeric | null;
  /** Null: the budget is for the key's lifetime. */
  budget_period: BudgetPeriod | null;
  /** JSON array of model ids, provider slugs or `slug/*`; null: every model. */
  models: Json | null;
  rpm: number | null;
  tpm: number | null;
  expires_at: Timestamp | null;
  last_used_at: Timestamp | null;
  /** Spent in the period starting at `period_start` (docs/keys.md). */
  spend_usd: GeneratedNumeric;
  /** Sum of the instances' leases on the key's budget (`key_holds`). */
  reserved_usd: GeneratedNumeric;
  period_start: Timestamp | null;
  /** When `budget_period` last changed (migration 0012): refunds of tasks from before it leave the spend as it is. */
  period_changed_at: ColumnType<Date | null, never, Date | string | null>;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
  revoked_at: Date | null;
}

export type ApiKeyRow = Selectable<ApiKeysTable>;

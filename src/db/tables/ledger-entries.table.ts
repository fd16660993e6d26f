import type { ColumnType, Generated, Selectable } from 'kysely';
import type { CreatedAt, Numeric } from './accounts.table.ts';

export type LedgerKind = 'topup' | 'charge' | 'refund' | 'adjustment';

/** Append-only: a row is never updated or deleted. */
export interface LedgerEntriesTable {
  id: Generated<number>;
  account_id: number;
  /** Signed: top-ups and refunds positive, charges negative. */
  amount_usd: Numeric;
  balance_after_usd: Numeric;
  kind: LedgerKind;
  task_id: string | null;
  /** Model category of the charge, for spend-by-category reports. */
  category: string | null;
  note: string | null;
  /** A top-up's `Idempotency-Key`: unique per account (migration 0011); null on every other entry. */
  idempotency_key: ColumnType<string | null, string | null | undefined, never>;
  created_at: CreatedAt;
}

export type LedgerEntryRow = Selectable<LedgerEntriesTable>;

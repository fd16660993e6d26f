import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';

/** numeric columns come back as strings (exact); callers convert with Number() at the edge. */
export type Numeric = ColumnType<string, string | number, string | number>;
/** A numeric column with a database default: optional on insert. (`Generated<Numeric>` would nest two ColumnTypes.) */
export type GeneratedNumeric = ColumnType<string, string | number | undefined, string | number>;
export type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
export type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export interface AccountsTable {
  id: Generated<number>;
  email: string;
  /** Kept equal to the sum of the account's ledger entries, in the same transaction. */
  balance_usd: GeneratedNumeric;
  /** Sum of the account's open LLM reservations (`llm_reservations`); spendable = balance − reserved. */
  reserved_usd: GeneratedNumeric;
  /** Sum of top-ups ever made: decides the upload plan (docs/api-contract.md). */
  topped_up_usd: GeneratedNumeric;
  webhook_signing_enabled: Generated<boolean>;
  webhook_secret: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export type AccountRow = Selectable<AccountsTable>;
export type NewAccount = Insertable<AccountsTable>;
export type AccountUpdate = Updateable<AccountsTable>;

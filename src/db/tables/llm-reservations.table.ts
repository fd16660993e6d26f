import type { Selectable } from 'kysely';
import type { CreatedAt, Numeric, Timestamp } from './accounts.table.ts';

/** An open hold on an account's balance for one LLM call in flight (deleted when it settles). */
export interface LlmReservationsTable {
  id: string;
  account_id: number;
  amount_usd: Numeric;
  /** Renewed while the call runs; past it, the sweeper releases the hold (its instance died). */
  expires_at: Timestamp;
  created_at: CreatedAt;
}

export type LlmReservationRow = Selectable<LlmReservationsTable>;

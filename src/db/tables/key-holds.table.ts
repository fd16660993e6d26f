import type { Numeric, Timestamp } from './accounts.table.ts';

/** An open hold on a key's budget for one LLM call in flight (deleted when it settles). */
export interface KeyHoldsTable {
  id: string;
  key_id: number;
  amount_usd: Numeric;
  /** Renewed while the call runs; past it, any instance's sweeper releases it (its instance died). */
  expires_at: Timestamp;
}

import type { Numeric, Timestamp } from './accounts.table.ts';

/**
 * One instance's lease on a key's budget (src/keys/key-budgets.ts): the instance grants its LLM
 * calls' holds from it in memory; settlements take their charges out of it.
 */
export interface KeyHoldsTable {
  id: string;
  key_id: number;
  amount_usd: Numeric;
  /** Renewed while its instance lives; past it, any instance's sweeper releases it (the instance died). */
  expires_at: Timestamp;
}

import type { BalanceReservations } from '../accounts/balance-reservations.ts';
import type { KeyTicket, LlmKeyGate } from '../keys/llm-key-gate.ts';

/**
 * The balance hold of a call whose key already holds its part (LLM and embeddings calls): the
 * key's hold goes back at once when the balance refuses, or when its statement fails (a database
 * error), rather than hours later when it would expire.
 */
export async function holdAfterKey(
  reservations: Pick<BalanceReservations, 'reserve'>,
  keyGate: LlmKeyGate | undefined,
  keyTicket: KeyTicket | null,
  accountId: number,
  units: bigint,
): Promise<Awaited<ReturnType<BalanceReservations['reserve']>>> {
  try {
    const result = await reservations.reserve(accountId, units);
    if (!result.ok && keyTicket) keyGate?.release(keyTicket);
    return result;
  } catch (err) {
    if (keyTicket) keyGate?.release(keyTicket);
    throw err;
  }
}

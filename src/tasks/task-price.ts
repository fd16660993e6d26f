import { roundUsd } from '../accounts/money.ts';

/**
 * The most one task may cost: what one top-up can credit (src/routes/admin.routes.ts). A price
 * above it comes from an input no one means (a duration of 1e30 seconds) and, from 1e14, is one
 * the ledger could not even hold.
 */
export const MAX_TASK_PRICE_USD = 1_000_000_000;

/** A model's price for an input at the ledger's precision, or undefined when no task may cost it. */
export function taskPrice(amount: number): number | undefined {
  const price = roundUsd(amount);
  return Number.isFinite(price) && price >= 0 && price <= MAX_TASK_PRICE_USD ? price : undefined;
}

export const beyondMaxPriceMessage = `input: prices the task above the most a task may cost ($${MAX_TASK_PRICE_USD.toLocaleString('en-US')})`;

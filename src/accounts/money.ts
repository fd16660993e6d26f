/**
 * USD amounts travel as JS numbers at the API edge (the spec's `balance_usd`/`cost` are JSON
 * numbers) and as exact numeric strings into Postgres, rounded to 10 decimal places
 * (0.1 nano-dollar), the precision of the numeric(24,10) columns.
 */
export function toUsdString(amount: number): string {
  if (!Number.isFinite(amount)) throw new RangeError(`not a finite USD amount: ${amount}`);
  return amount.toFixed(10);
}

/** Rounds to the stored precision so what we answer equals what we stored. */
export function roundUsd(amount: number): number {
  return Number(amount.toFixed(10));
}

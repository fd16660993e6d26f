/**
 * Money inside the gateway is `UsdUnits`: an exact integer count of 1e-10 USD (0.1 nano-dollar),
 * the precision of the numeric(24,10) columns. JS numbers appear only at the edges — prices from
 * the config and amounts in JSON bodies coming in, `balance_usd`/`cost` in JSON going out — and
 * numeric text only between repositories and Postgres. See docs/money.md.
 */
export type UsdUnits = bigint;

/**
 * A JS amount as numeric text, exactly. `toFixed` writes exponent form from 1e21 (`5e+28`), where
 * every float is a whole number: those are written digit by digit. What a column can hold is the
 * database's to say (numeric(24,10) holds less than 1e14); callers bound what they store.
 */
export function toUsdString(amount: number): string {
  if (!Number.isFinite(amount)) throw new RangeError(`not a finite USD amount: ${amount}`);
  return Math.abs(amount) < 1e21 ? amount.toFixed(10) : `${BigInt(amount)}.0000000000`;
}

/** Rounds to the stored precision so what we answer equals what we stored. */
export function roundUsd(amount: number): number {
  return Number(amount.toFixed(10));
}

/** Units of 1e-10 USD, the columns' precision: exact integer arithmetic for balances in JS. */
const SCALE = 10_000_000_000n;

/** A numeric column's text (`'12.5000000000'`, `'-0.01'`) or a JS amount → exact units. */
export function toUnits(amount: string | number): UsdUnits {
  const text = typeof amount === 'number' ? toUsdString(amount) : amount.trim();
  // Read digit by digit: any other notation (`5e+28`, `0x10`) would be read as something else.
  if (!/^[-+]?\d+(?:\.\d*)?$/.test(text)) throw new RangeError(`not a decimal USD amount: ${text}`);
  const negative = text.startsWith('-');
  const [whole = '0', fraction = ''] = text.replace(/^[-+]/, '').split('.');
  const units = BigInt(whole) * SCALE + BigInt(`${fraction}0000000000`.slice(0, 10));
  return negative ? -units : units;
}

/** Exact units → the numeric text Postgres stores. */
export function fromUnits(units: UsdUnits): string {
  const negative = units < 0n;
  const abs = negative ? -units : units;
  return `${negative ? '-' : ''}${abs / SCALE}.${(abs % SCALE).toString().padStart(10, '0')}`;
}

/** Exact units → the JSON number an API answer carries (the edge; never computed on further). */
export function unitsToUsd(units: UsdUnits): number {
  return Number(fromUnits(units));
}

/** The smaller of two amounts (`Math.min` takes numbers, not bigints). */
export function minUnits(a: UsdUnits, b: UsdUnits): UsdUnits {
  return a < b ? a : b;
}

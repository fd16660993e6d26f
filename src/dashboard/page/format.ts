/** Display formatting only: the numbers themselves come from the API. */

const usdFormats = new Map<number, Intl.NumberFormat>();
function usdFormat(maxDigits: number): Intl.NumberFormat {
  let format = usdFormats.get(maxDigits);
  if (!format) {
    format = new Intl.NumberFormat('en-US', {
      style: 'currency',
      currency: 'USD',
      minimumFractionDigits: 2,
      maximumFractionDigits: maxDigits,
    });
    usdFormats.set(maxDigits, format);
  }
  return format;
}

/** Dollars with cents, and more digits for the fractions of a cent LLM calls cost. */
export function usd(amount: number): string {
  const abs = Math.abs(amount);
  return usdFormat(abs === 0 || abs >= 1 ? 2 : abs >= 0.01 ? 4 : 6).format(amount);
}

export function dateTime(unixSeconds: number): string {
  return new Date(unixSeconds * 1000).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}

export function isoTime(unixSeconds: number): string {
  return new Date(unixSeconds * 1000).toISOString();
}

/** `2026-01-05` (a UTC day from the API) → `Jan 5`. */
export function shortDay(day: string): string {
  return new Date(`${day}T00:00:00Z`).toLocaleDateString(undefined, {
    month: 'short',
    day: 'numeric',
    timeZone: 'UTC',
  });
}

export const integer = (n: number) => n.toLocaleString('en-US');

export const prettyJson = (value: unknown) => JSON.stringify(value, null, 2);

import type { Pricing } from '../config/config-schema.ts';

/** What a media price depends on, read from the input by the model's options. */
export interface PriceBasis {
  /** Images asked for: the ceiling charged at creation. */
  images: number;
  /** Seconds of output. */
  seconds: number;
  /** Characters of text to speak or read. */
  chars: number;
}

/**
 * A config price rule: `per_request` + `per_image` × images + `per_second` × seconds +
 * `per_1k_chars` × chars / 1000, never below `minimum`. Unset parts count zero.
 */
export function priceOf(pricing: Pricing | undefined, basis: PriceBasis): number {
  if (!pricing) return 0;
  const total =
    (pricing.per_request ?? 0) +
    (pricing.per_image ?? 0) * basis.images +
    (pricing.per_second ?? 0) * basis.seconds +
    ((pricing.per_1k_chars ?? 0) * basis.chars) / 1000;
  // Float sums like 0.1 + 0.2 would otherwise leak into the ledger's rounding.
  return Math.max(pricing.minimum ?? 0, Math.round(total * 1e9) / 1e9);
}

/** A non-negative number from an input field, or undefined when the field is not a number. */
export function numberField(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return value;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)) && Number(value) >= 0)
    return Number(value);
  return undefined;
}

/** Characters of a text field, counted as code points (what TTS providers bill). */
export function charCount(value: unknown): number {
  if (typeof value === 'string') return [...value].length;
  if (Array.isArray(value)) return value.reduce<number>((n, item) => n + charCount(item), 0);
  return 0;
}

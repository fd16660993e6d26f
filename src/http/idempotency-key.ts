import { unprocessable } from './errors.ts';

/**
 * The `Idempotency-Key` header (beyond the API contract, as payment APIs have it): 1–255 visible
 * ASCII characters, or absent. A retried request with the same key is answered, not done again.
 */
export function idempotencyKey(headers: Headers): string | undefined {
  const key = headers.get('idempotency-key');
  if (key === null) return undefined;
  if (!/^[\x21-\x7e]{1,255}$/.test(key))
    throw unprocessable('Idempotency-Key: must be 1 to 255 visible ASCII characters');
  return key;
}

/** Said on an answer that repeats an earlier request's outcome instead of doing it again. */
export const REPLAYED_HEADER = { 'idempotent-replayed': 'true' } as const;

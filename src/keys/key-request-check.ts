import type { KeyPolicy } from './key-policy.ts';
import type { KeyRateLimits } from './key-rate-limits.ts';

export type KeyRefusal = { kind: 'expired' } | { kind: 'rpm'; retryAfterSeconds: number };

/**
 * The checks every authenticated request of a key passes (docs/keys.md): the key has not
 * expired, and its `rpm` has room. A key without limits costs nothing here: no store round trip.
 */
export async function checkKeyRequest(
  keyId: number,
  policy: KeyPolicy,
  limits: KeyRateLimits,
  now = Date.now(),
): Promise<KeyRefusal | null> {
  if (policy.expiresAt !== null && now >= policy.expiresAt) return { kind: 'expired' };
  if (policy.rpm === null) return null;
  const decision = await limits.request(keyId, policy.rpm);
  return decision.ok ? null : { kind: 'rpm', retryAfterSeconds: decision.retryAfterSeconds };
}

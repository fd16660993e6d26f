import type { AppContext } from '../app/context.ts';
import { checkKeyRequest, type KeyRefusal } from '../keys/key-request-check.ts';
import type { AuthContext } from './key-cache.ts';

/** Why an authenticated request may not go on: its key expired, or a rate limit has no room. */
export type RequestRefusal = { kind: 'expired' } | { kind: 'rate'; retryAfterSeconds: number };

/**
 * The limits every request of a key passes once it is authenticated (docs/limits.md, docs/keys.md):
 * the per-key and per-account rate limits, then the key's own expiry and rpm. The API's auth
 * plugin and the dashboard's sign-in both apply them, so a sign-in is a request like any other.
 * Synchronous for a key without limits of its own: the common request does not even yield a tick.
 */
export function requestLimits(ctx: Pick<AppContext, 'config' | 'env' | 'rateLimiter' | 'keyLimits'>) {
  const limit = ctx.config.rateLimitPerMinute ?? ctx.env.rateLimitPerMinute;
  // An account may have any number of keys: without a limit of its own, each new key would add
  // another `limit` to what one account can send (docs/limits.md).
  const accountLimit = ctx.config.rateLimitPerAccountPerMinute ?? ctx.env.rateLimitPerAccountPerMinute ?? limit * 10;
  return (auth: AuthContext): RequestRefusal | null | Promise<RequestRefusal | null> => {
    const decision = ctx.rateLimiter.checkAll(
      [`key:${auth.keyId}`, limit],
      [`account:${auth.accountId}`, accountLimit],
    );
    if (!decision.allowed) return { kind: 'rate', retryAfterSeconds: decision.retryAfterSeconds };
    if (!auth.policy) return null;
    return checkKeyRequest(auth.keyId, auth.policy, ctx.keyLimits).then(asRequestRefusal);
  };
}

function asRequestRefusal(refusal: KeyRefusal | null): RequestRefusal | null {
  if (refusal === null) return null;
  return refusal.kind === 'expired' ? refusal : { kind: 'rate', retryAfterSeconds: refusal.retryAfterSeconds };
}

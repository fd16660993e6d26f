import type { AuthContext } from '../auth/key-cache.ts';
import { forbidden } from '../http/errors.ts';
import { isLimited, limitedKeyMessage } from './key-policy.ts';

/**
 * Refuses a request made with a limited key (or a dashboard session signed in with one): what it
 * would do reaches past the key's own limits. Were a key kept to one model and $5 able to create,
 * loosen or revoke keys, rotate the `default` key or read the webhook secret, a leaked limited key
 * would be the whole account. A key's own settings are the account owner's to change.
 */
export function unlimitedKeyOnly(auth: AuthContext): void {
  if (isLimited(auth.policy)) throw forbidden(limitedKeyMessage);
}

import { timingSafeEqual } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export const KEY_PREFIX = 'gw_';

/**
 * A new API key: `gw_` + 48 base62 characters from 48 random bytes (≈285 bits, well over the
 * 32 bytes asked for; the modulo bias of 256 % 62 costs under 0.2 bit per character).
 */
export function generateApiKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(48));
  let key = KEY_PREFIX;
  for (const byte of bytes) key += ALPHABET[byte % 62];
  return key;
}

/** Lowercase hex SHA-256: what is stored and looked up. */
export function hashApiKey(key: string): string {
  return new Bun.CryptoHasher('sha256').update(key).digest('hex');
}

export function keyPrefix(key: string): string {
  return key.slice(0, KEY_PREFIX.length + 6);
}

/** Constant-time equality of two hex digests of equal length. */
export function sameHash(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  return timingSafeEqual(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'));
}

/** The token of `Authorization: Bearer …` as an operator's token is given (admin, metrics); undefined without one. */
export function bearerToken(request: Request): string | undefined {
  return /^Bearer\s+(\S+)$/i.exec(request.headers.get('authorization') ?? '')?.[1];
}

/** Whether `Authorization: Bearer …` carries the token of this hash (an operator's token), compared in constant time. */
export function bearerMatches(request: Request, tokenHash: string): boolean {
  const given = bearerToken(request);
  return given !== undefined && sameHash(hashApiKey(given), tokenHash);
}

/** Pulls the key out of `Authorization: Bearer …` (or `x-api-key`, as Anthropic clients send). */
export function extractApiKey(headers: Headers, allowXApiKey: boolean): string | undefined {
  const auth = headers.get('authorization');
  if (auth) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (match) return match[1];
  }
  if (allowXApiKey) return headers.get('x-api-key') ?? undefined;
  return undefined;
}

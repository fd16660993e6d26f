const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

/**
 * Random ids in each format's own style (`chatcmpl-…`, `msg_…`, `resp_…`, `call_…`, `toolu_…`).
 * Not secrets, just unique; crypto randomness keeps collisions out of the question.
 */
export function mintId(prefix: string, length = 24): string {
  const bytes = crypto.getRandomValues(new Uint8Array(length));
  let out = prefix;
  for (const byte of bytes) out += ALPHABET[byte % ALPHABET.length];
  return out;
}

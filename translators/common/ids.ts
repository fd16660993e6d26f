const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
const CODES = Array.from(ALPHABET, (c) => c.charCodeAt(0));

/** Random bytes drawn 4 KiB at a time: several ids are minted per call, and one draw each cost more than the id. */
const pool = new Uint8Array(4096);
let taken = pool.length;
const codes: number[] = [];

/**
 * Random ids in each format's own style (`chatcmpl-…`, `msg_…`, `resp_…`, `call_…`, `toolu_…`).
 * Not secrets, just unique; crypto randomness keeps collisions out of the question.
 */
export function mintId(prefix: string, length = 24): string {
  if (taken + length > pool.length) {
    // An id longer than the pool is never asked for; one that is gets a draw of its own.
    if (length > pool.length) return prefix + encode(crypto.getRandomValues(new Uint8Array(length)), 0, length);
    crypto.getRandomValues(pool);
    taken = 0;
  }
  const id = prefix + encode(pool, taken, length);
  taken += length;
  return id;
}

/** `length` random bytes from `at` as alphabet characters, built in one call rather than char by char. */
function encode(bytes: Uint8Array, at: number, length: number): string {
  codes.length = length;
  for (let i = 0; i < length; i++) codes[i] = CODES[(bytes[at + i] as number) % CODES.length] as number;
  return String.fromCharCode.apply(null, codes);
}

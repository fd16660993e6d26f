/**
 * A name-based UUID laid out as version 5 (SHA-1 of namespace and name): preset ids stay the same
 * across restarts and instances without a table of 36-character literals to keep in sync.
 * @see https://www.rfc-editor.org/rfc/rfc9562#section-5.5
 */
export function stableUuid(namespace: string, name: string): string {
  const hash = new Bun.CryptoHasher('sha1').update(`${namespace}\u0000${name}`).digest();
  const bytes = new Uint8Array(hash.buffer, hash.byteOffset, 16);
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x50;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = Buffer.from(bytes).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

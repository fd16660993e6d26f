/**
 * CRC-32 (ISO 3309 / ITU-T V.42, reflected polynomial 0xEDB88320), as PNG requires for every chunk.
 * Own table rather than a runtime helper so the encoders stay portable and pure.
 * @see https://www.w3.org/TR/png-3/#5CRC-algorithm
 */
const TABLE: Uint32Array = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32 over the given byte ranges in order (PNG covers chunk type + data without a copy). */
export function crc32(...parts: Uint8Array[]): number {
  let c = 0xffffffff;
  for (const bytes of parts) {
    for (let i = 0; i < bytes.length; i++) c = TABLE[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  }
  return (c ^ 0xffffffff) >>> 0;
}

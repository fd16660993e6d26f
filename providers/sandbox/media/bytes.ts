export type Bytes = Uint8Array;

/** The parts one after another in one new array (the PNG and MP4 writers build files from parts). */
export function concat(parts: readonly Bytes[]): Bytes {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

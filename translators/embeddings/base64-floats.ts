/**
 * Vectors as base64 of little-endian IEEE-754 float32, the `encoding_format: "base64"` form of the
 * OpenAI embeddings API (the official SDK decodes it with a Float32Array over the bytes).
 * @see https://platform.openai.com/docs/api-reference/embeddings/create
 */

export function floatsToBase64(vector: Float32Array): string {
  const bytes = new Uint8Array(vector.length * 4);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < vector.length; i++) view.setFloat32(i * 4, vector[i] ?? 0, true);
  return Buffer.from(bytes).toString('base64');
}

/** The vector, or undefined when the text is not base64 of a whole number of float32 values. */
export function base64ToFloats(text: string): Float32Array | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length % 4 !== 0) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Float32Array(bytes.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(i * 4, true);
  return out;
}

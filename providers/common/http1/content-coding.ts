/** The content codings a `DecompressionStream` undoes, by their `content-encoding` names. */
const FORMATS: Record<string, CompressionFormat> = {
  gzip: 'gzip',
  'x-gzip': 'gzip',
  deflate: 'deflate',
  br: 'brotli' as CompressionFormat,
  zstd: 'zstd' as CompressionFormat,
};

/**
 * The body as the server meant it: its content codings undone, last applied first, and the
 * `content-encoding` and `content-length` fields dropped with them (the length was the coded
 * one; without it, readers count the decoded bytes against their bounds, a small coded body
 * that would inflate past them included). An unknown coding is left as it came.
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-8.4
 */
export function decodedBody(
  headers: Headers,
  raw: ReadableStream<Uint8Array> | null,
): { headers: Headers; stream: ReadableStream<Uint8Array> | null } {
  const coding = headers.get('content-encoding');
  if (coding === null || raw === null) return { headers, stream: raw };
  const codings = coding
    .toLowerCase()
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c && c !== 'identity');
  if (codings.some((c) => !(c in FORMATS))) return { headers, stream: raw };
  let stream = raw;
  for (const c of codings.reverse())
    stream = stream.pipeThrough(
      new DecompressionStream(FORMATS[c] as CompressionFormat) as unknown as ReadableWritablePair<
        Uint8Array,
        Uint8Array
      >,
    );
  headers.delete('content-encoding');
  headers.delete('content-length');
  return { headers, stream };
}

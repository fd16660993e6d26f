/**
 * Replays a recorded `.sse` fixture as a byte stream cut into chunks at the given sizes, so
 * decoders meet events split mid-line, mid-UTF-8 character and mid-`\n\n`.
 */
export function replayBytes(bytes: Uint8Array, chunkSizes: number[]): ReadableStream<Uint8Array> {
  let offset = 0;
  let step = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= bytes.length) {
        controller.close();
        return;
      }
      const size = Math.max(1, chunkSizes[step++ % chunkSizes.length] ?? 1);
      controller.enqueue(bytes.slice(offset, offset + size));
      offset += size;
    },
  });
}

/** Awkward split patterns every fixture is replayed with: whole, byte by byte, primes, and one big cut. */
export const SPLITS: Record<string, number[]> = {
  whole: [Number.MAX_SAFE_INTEGER],
  byteByByte: [1],
  primes: [3, 7, 13, 2, 31],
  halves: [97, 1],
};

export async function collect<T>(stream: ReadableStream<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of stream) out.push(item);
  return out;
}

export async function readFixture(path: string): Promise<Uint8Array> {
  return new Uint8Array(await Bun.file(path).arrayBuffer());
}

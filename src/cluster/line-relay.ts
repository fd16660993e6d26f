/**
 * Copies a worker's output to this process's stdout or stderr in whole lines. Processes writing
 * to one shared pipe interleave: Bun finishes a write the pipe could not take in one go later, in
 * pieces, so two workers' JSON lines could be spliced into one another. Relayed through the
 * primary, every write to the real stdout comes from one process, in order, cut at line ends.
 */
export async function relayLines(from: ReadableStream<Uint8Array>, write: (bytes: Uint8Array) => void): Promise<void> {
  let rest: Uint8Array | undefined;
  for await (const chunk of from) {
    let data = chunk;
    if (rest) {
      data = new Uint8Array(rest.length + chunk.length);
      data.set(rest);
      data.set(chunk, rest.length);
      rest = undefined;
    }
    const lastNewline = data.lastIndexOf(10);
    if (lastNewline === -1) {
      rest = data;
      continue;
    }
    write(data.subarray(0, lastNewline + 1));
    if (lastNewline + 1 < data.length) rest = data.slice(lastNewline + 1);
  }
  // The worker ended mid-line (a crash): what it wrote still goes out.
  if (rest) write(rest);
}

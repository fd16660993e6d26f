import { EnvelopeError } from '../http/errors.ts';

/** A write went past its size limit; nothing was kept. 413 when it reaches a client. */
export class FileTooLargeError extends EnvelopeError {
  constructor(readonly maxBytes: number) {
    super(413, `file is larger than ${maxBytes} bytes`);
    this.name = 'FileTooLargeError';
  }
}

/**
 * Passes chunks through, calling `onChunk` for each (hashing, counting), and errors with
 * FileTooLargeError as soon as more than `maxBytes` went by, so a writer reading it stops there.
 */
export function meterStream(
  source: ReadableStream<Uint8Array>,
  opts: { maxBytes?: number; onChunk?: (chunk: Uint8Array) => void },
): ReadableStream<Uint8Array> {
  const max = opts.maxBytes ?? Number.POSITIVE_INFINITY;
  let total = 0;
  return source.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        total += chunk.byteLength;
        if (total > max) throw new FileTooLargeError(max);
        opts.onChunk?.(chunk);
        controller.enqueue(chunk);
      },
    }),
  );
}

/** A byte array as a one-chunk stream, so both kinds of body take the same path. */
export function toStream(body: Uint8Array | ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  if (body instanceof ReadableStream) return body;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(body);
      controller.close();
    },
  });
}

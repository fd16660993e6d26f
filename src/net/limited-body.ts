import { FetchLimitError } from './net-errors.ts';

/**
 * A response body that errors with a FetchLimitError once more than `maxBytes` have arrived, or
 * when the fetch's deadline aborts `signal` mid-body. `onDone` runs once, however it ends, so the
 * caller can clear its deadline timer.
 */
export function limitBody(
  body: ReadableStream<Uint8Array>,
  opts: { maxBytes: number; signal: AbortSignal; field: string; onDone: () => void },
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let received = 0;
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    opts.onDone();
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          finish();
          controller.close();
          return;
        }
        received += value.byteLength;
        if (received > opts.maxBytes) {
          finish();
          controller.error(new FetchLimitError('size', `${opts.field}: body is larger than ${opts.maxBytes} bytes`));
          await reader.cancel().catch(() => undefined);
          return;
        }
        controller.enqueue(value);
      } catch (err) {
        finish();
        controller.error(abortReason(opts.signal) ?? err);
      }
    },
    async cancel(reason) {
      finish();
      await reader.cancel(reason);
    },
  });
}

/** The deadline's own error when the fetch was aborted by it (fetch reports a generic AbortError). */
export function abortReason(signal: AbortSignal): FetchLimitError | undefined {
  return signal.aborted && signal.reason instanceof FetchLimitError ? signal.reason : undefined;
}

/** `work`, or the abort reason as soon as `signal` fires (for steps fetch's signal does not cover, like DNS). */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

import { BodyError } from '../http/request-body.ts';

/** What a client's upload body must keep up once its grace is over: 1 KiB a second on average. */
export const MIN_UPLOAD_BYTES_PER_SECOND = 1024;

/**
 * An upload body that must keep arriving: from `graceMs` after it began, at least
 * `bytesPerSecond` on average since then. An upload may be large and slow, so it has no deadline
 * of its own (the JSON routes' `BODY_TIMEOUT_MS`), but a client trickling a few bytes just under
 * Bun's idle timeout would otherwise hold its connection, its stream and a partial file for as
 * long as it liked. The check runs at each chunk and, while none comes, at the moment the bytes
 * so far fall behind: 408 with the connection closed, as a late JSON body.
 */
export function withMinimumRate(
  source: ReadableStream<Uint8Array>,
  opts: { bytesPerSecond: number; graceMs: number; now?: () => number },
): ReadableStream<Uint8Array> {
  const now = opts.now ?? performance.now.bind(performance);
  const started = now();
  let received = 0;
  const reader = source.getReader();
  /** When the bytes so far stop covering the rate: the grace's end, or later for what came. */
  const dueBy = () => started + Math.max(opts.graceMs, (received / opts.bytesPerSecond) * 1000);
  const tooSlow = () =>
    new BodyError(
      'timeout',
      `request body arrived slower than ${opts.bytesPerSecond} bytes a second (after ${opts.graceMs / 1000} s)`,
    );
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const late = new Promise<'late'>((resolve) => {
          timer = setTimeout(() => resolve('late'), Math.max(0, dueBy() - now()));
        });
        try {
          const next = await Promise.race([reader.read(), late]);
          if (next === 'late') throw tooSlow();
          if (next.done) return controller.close();
          received += next.value.byteLength;
          controller.enqueue(next.value);
        } catch (err) {
          controller.error(err);
          await reader.cancel(err).catch(() => undefined);
        } finally {
          clearTimeout(timer);
        }
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
}

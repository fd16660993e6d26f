import { FileTooLargeError } from '../storage/byte-limit.ts';
import type { Store } from '../store/store.ts';

/** Bytes added to the shared day counter at a time while an upload streams. */
const SYNC_BYTES = 8 * 1024 * 1024;

export interface DailyByteMeterOptions {
  /** The day's counter in the shared store. */
  key: string;
  budget: number;
  /** The counter's value when the upload was admitted. */
  used: number;
  ttlMs: number;
  /** The 429 an upload that would cross the budget is cut off with. */
  overBudget: () => Error;
}

/**
 * Counts one upload's bytes against the account's daily volume as they stream. Every
 * `SYNC_BYTES` the bytes so far are added to the shared counter, so concurrent uploads (on any
 * instance) see each other; an upload whose bytes would take the counter past the budget is cut
 * off at that chunk. A failed upload takes its bytes back, so the day counts what was stored.
 */
export class DailyByteMeter {
  /** Bytes of this upload seen so far. */
  private counted = 0;
  /** Of those, already added to the shared counter. */
  private charged = 0;
  /** The shared counter at the last sync (every upload's charged bytes). */
  private shared: number;
  /** The first error that went through the metered stream: the upload's real cause of failure. */
  failure: unknown;

  constructor(
    private readonly store: Store,
    private readonly opts: DailyByteMeterOptions,
  ) {
    this.shared = opts.used;
  }

  /**
   * `source`, counted; `onChunk` sees each chunk's size (the GC pacer). Past `maxBytes` the
   * stream errors with the 413 at the chunk that crossed it, as it is read: the file store
   * checks the same limit only when it consumes the chunk, and a body that ends meanwhile (a
   * multipart part without its delimiter) would otherwise fail the upload with its own 422.
   */
  meter(
    source: ReadableStream<Uint8Array>,
    opts: { maxBytes?: number; onChunk?: (bytes: number) => void } = {},
  ): ReadableStream<Uint8Array> {
    const { maxBytes = Number.POSITIVE_INFINITY, onChunk } = opts;
    const reader = source.getReader();
    // Set when the consumer gives up (the store refused a chunk: too large, disk error). A read
    // still pending then settles afterwards, and the stream must not be touched any more: its
    // controller is closed, and the consumer's own error is the upload's real failure.
    let cancelled = false;
    return new ReadableStream<Uint8Array>(
      {
        pull: async (controller) => {
          try {
            const { done, value } = await reader.read();
            if (cancelled) return;
            if (done) return controller.close();
            this.counted += value.byteLength;
            if (this.counted > maxBytes) throw new FileTooLargeError(maxBytes);
            onChunk?.(value.byteLength);
            if (this.counted - this.charged >= SYNC_BYTES) await this.sync();
            if (cancelled) return;
            if (this.shared + (this.counted - this.charged) > this.opts.budget) throw this.opts.overBudget();
            controller.enqueue(value);
          } catch (err) {
            if (cancelled) return;
            // Kept here because a storage backend may wrap what it read from the stream.
            this.failure ??= err;
            controller.error(err);
            await reader.cancel(err).catch(() => undefined);
          }
        },
        cancel: (reason) => {
          cancelled = true;
          return reader.cancel(reason);
        },
      },
      { highWaterMark: 0 },
    );
  }

  /** The upload was stored: its last bytes go on the counter. */
  async commit(): Promise<void> {
    if (this.counted > this.charged) await this.sync();
  }

  /** The upload failed: whatever it charged is taken back. */
  async release(): Promise<void> {
    if (this.charged === 0) return;
    const by = this.charged;
    this.charged = 0;
    await this.store.incr(this.opts.key, -by, this.opts.ttlMs);
  }

  /** Counted as charged before the store answers: several streams metered at once never add the same bytes twice. */
  private async sync(): Promise<void> {
    const by = this.counted - this.charged;
    this.charged += by;
    this.shared = await this.store.incr(this.opts.key, by, this.opts.ttlMs);
  }
}

import type { Logger } from './logger.ts';
import { errorFields } from './logger.ts';

export interface GroupCommitOptions {
  /** For log lines. */
  name: string;
  log: Logger;
  /** Most items one write takes. */
  maxBatch?: number;
  /** Writes under way at once. */
  maxInFlight?: number;
  /**
   * How long a write waits for more items before it starts, when nothing is being written: for
   * writes nobody waits on (the settlement after a journaled answer), fewer and larger batches.
   */
  lingerMs?: number;
}

interface Waiting<T, R> {
  item: T;
  resolve(result: R): void;
  reject(err: unknown): void;
}

/**
 * Group commit: items submitted while a write is under way go together in the next one, so under
 * load one transaction serves many requests and at rest an item is written at once.
 *
 * A failed batch never fails its neighbours: it is split and each item written alone, so only
 * the item that cannot be written is rejected (one account's hostile input cannot fail another
 * account's request). `write` returns one result per item, in order.
 */
export class GroupCommit<T, R> {
  private queue: Waiting<T, R>[] = [];
  private inFlight = 0;
  private idle: Array<() => void> = [];
  private readonly maxBatch: number;
  private readonly maxInFlight: number;
  private lingering: ReturnType<typeof setTimeout> | undefined;
  private lingerMs: number;

  constructor(
    private readonly write: (batch: T[]) => Promise<R[]>,
    private readonly opts: GroupCommitOptions,
  ) {
    this.maxBatch = opts.maxBatch ?? 500;
    this.maxInFlight = opts.maxInFlight ?? 1;
    this.lingerMs = opts.lingerMs ?? 0;
  }

  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.pump();
    });
  }

  /** Items waiting or being written. */
  get pending(): number {
    return this.queue.length + this.inFlight;
  }

  /** From now on a write starts at once (its callers wait for it again). */
  stopLingering(): void {
    this.lingerMs = 0;
    if (this.lingering) {
      clearTimeout(this.lingering);
      this.lingering = undefined;
      this.pump();
    }
  }

  /** Resolves once nothing is queued or being written. */
  drain(): Promise<void> {
    this.stopLingering();
    if (this.queue.length === 0 && this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private pump(): void {
    if (this.lingering) return;
    if (this.lingerMs > 0 && this.inFlight === 0 && this.queue.length > 0 && this.queue.length < this.maxBatch) {
      this.lingering = setTimeout(() => {
        this.lingering = undefined;
        this.startWrites();
      }, this.lingerMs);
      return;
    }
    this.startWrites();
  }

  private startWrites(): void {
    while (this.inFlight < this.maxInFlight && this.queue.length) {
      const batch = this.queue.splice(0, this.maxBatch);
      this.inFlight++;
      void this.run(batch).finally(() => {
        this.inFlight--;
        this.pump();
        if (this.queue.length === 0 && this.inFlight === 0) for (const done of this.idle.splice(0)) done();
      });
    }
  }

  private async run(batch: Waiting<T, R>[]): Promise<void> {
    try {
      const results = await this.write(batch.map((w) => w.item));
      for (const [i, w] of batch.entries()) w.resolve(results[i] as R);
      return;
    } catch (err) {
      if (batch.length === 1) {
        this.opts.log.error(`${this.opts.name} failed`, errorFields(err));
        batch[0]?.reject(err);
        return;
      }
      this.opts.log.warn(
        `${this.opts.name} batch failed; writing its ${batch.length} items one by one`,
        errorFields(err),
      );
    }
    for (const w of batch) {
      try {
        const [result] = await this.write([w.item]);
        w.resolve(result as R);
      } catch (err) {
        this.opts.log.error(`${this.opts.name} failed`, errorFields(err));
        w.reject(err);
      }
    }
  }
}

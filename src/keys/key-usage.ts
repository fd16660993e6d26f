import type { Db } from '../db/database.ts';
import type { Logger } from '../ops/logger.ts';
import { errorFields } from '../ops/logger.ts';
import { touchKeys } from './api-keys.repository.ts';

/**
 * `last_used_at` of keys, kept off the request path: a use is noted in memory and written with
 * one statement for all keys `flushMs` after the first use not yet written, so it reads a few
 * seconds late at most. No use, no timer: an idle gateway is not woken to write nothing.
 */
export class KeyUsage {
  private pending = new Map<number, Date>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly flushMs = 2_000,
  ) {}

  touch(keyId: number): void {
    this.pending.set(keyId, new Date());
    if (this.timer === undefined && !this.stopped) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        void this.flush();
      }, this.flushMs);
      this.timer.unref?.();
    }
  }

  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const uses = this.pending;
    this.pending = new Map();
    try {
      await touchKeys(this.db, uses);
    } catch (err) {
      this.log.warn('recording key use failed', errorFields(err));
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}

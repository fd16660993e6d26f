import type { Db } from '../db/database.ts';
import type { Logger } from '../ops/logger.ts';
import { errorFields } from '../ops/logger.ts';
import { touchKeys } from './api-keys.repository.ts';

/**
 * `last_used_at` of keys, kept off the request path: a use is noted in memory and written with
 * one statement for all keys every `flushMs`, so it reads a few seconds late at most.
 */
export class KeyUsage {
  private pending = new Map<number, Date>();
  private readonly timer: ReturnType<typeof setInterval>;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    flushMs = 2_000,
  ) {
    this.timer = setInterval(() => void this.flush(), flushMs);
    this.timer.unref?.();
  }

  touch(keyId: number): void {
    this.pending.set(keyId, new Date());
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
    clearInterval(this.timer);
    await this.flush();
  }
}

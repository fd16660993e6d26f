import type { Store } from '../store/store.ts';

interface Window {
  /** Count seen in the shared store at the last sync (all instances). */
  shared: number;
  /** Requests counted here and not yet added to the store. */
  pending: number;
  /** Requests being added to the store right now: still counted until the new total is back. */
  sending: number;
  expiresAt: number;
}

export interface RateDecision {
  allowed: boolean;
  retryAfterSeconds: number;
}

/**
 * Fixed one-minute windows per key, counted in the shared store so the limit holds across
 * instances. The request path never waits for the store: it counts locally and a flush, due
 * `syncMs` after the first count it has not sent, adds the pending counts with one INCRBY per key,
 * reading back the global total. A burst spread over several instances can overshoot by at most
 * `syncMs` of traffic. Nothing is scheduled while nothing is pending: an idle gateway is not
 * woken 50 times a second for nothing.
 */
export class RateLimiter {
  private readonly windows = new Map<string, Window>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private flushing = false;
  private stopped = false;

  constructor(
    private readonly store: Store,
    private readonly syncMs = 20,
    private readonly now: () => number = Date.now,
  ) {}

  check(subject: string, limitPerMinute: number): RateDecision {
    return this.checkAll([subject, limitPerMinute]);
  }

  /**
   * One request counted against every `[subject, limit]` at once (a key and its account): refused
   * when any is used up, and then counted against none.
   */
  checkAll(...limits: Array<[subject: string, limitPerMinute: number]>): RateDecision {
    const now = this.now();
    const minute = Math.floor(now / 60_000);
    const expiresAt = (minute + 1) * 60_000;
    const retryAfterSeconds = (expiresAt - now) / 1000;
    const windows: Window[] = [];
    for (const [subject, limitPerMinute] of limits) {
      const key = `rl:${subject}:${minute}`;
      let window = this.windows.get(key);
      if (!window) {
        window = { shared: 0, pending: 0, sending: 0, expiresAt };
        this.windows.set(key, window);
      }
      if (window.shared + window.sending + window.pending >= limitPerMinute)
        return { allowed: false, retryAfterSeconds };
      windows.push(window);
    }
    for (const window of windows) window.pending += 1;
    this.schedule();
    return { allowed: true, retryAfterSeconds };
  }

  /** A flush `syncMs` from now, unless one is due already. */
  private schedule(): void {
    if (this.timer || this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.syncMs);
    this.timer.unref?.();
  }

  async flush(): Promise<void> {
    if (this.flushing) return;
    this.flushing = true;
    try {
      const now = this.now();
      const work: Promise<void>[] = [];
      for (const [key, window] of this.windows) {
        if (window.expiresAt <= now) {
          this.windows.delete(key);
          continue;
        }
        const by = window.pending;
        if (by === 0) continue;
        window.pending = 0;
        window.sending += by;
        work.push(
          this.store.incr(key, by, window.expiresAt - now + 5_000).then(
            (total) => {
              window.sending -= by;
              window.shared = Math.max(window.shared, total);
            },
            () => {
              window.sending -= by;
              window.pending += by; // store unreachable: keep counting locally, retry next tick
            },
          ),
        );
      }
      await Promise.all(work);
    } finally {
      this.flushing = false;
      // Counted during this flush, or given back by a store that did not answer: sent next time.
      for (const window of this.windows.values())
        if (window.pending > 0) {
          this.schedule();
          break;
        }
    }
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

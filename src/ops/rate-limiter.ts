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
 * instances. The request path never waits for the store: it counts locally and a flusher adds
 * the pending counts with one INCRBY per key every `syncMs`, reading back the global total. A
 * burst spread over several instances can overshoot by at most `syncMs` of traffic.
 */
export class RateLimiter {
  private readonly windows = new Map<string, Window>();
  private readonly timer: ReturnType<typeof setInterval>;
  private flushing = false;

  constructor(
    private readonly store: Store,
    syncMs = 20,
    private readonly now: () => number = Date.now,
  ) {
    this.timer = setInterval(() => void this.flush(), syncMs);
    this.timer.unref?.();
  }

  check(subject: string, limitPerMinute: number): RateDecision {
    const now = this.now();
    const minute = Math.floor(now / 60_000);
    const key = `rl:${subject}:${minute}`;
    let window = this.windows.get(key);
    if (!window) {
      window = { shared: 0, pending: 0, sending: 0, expiresAt: (minute + 1) * 60_000 };
      this.windows.set(key, window);
    }
    const retryAfterSeconds = (window.expiresAt - now) / 1000;
    if (window.shared + window.sending + window.pending >= limitPerMinute) return { allowed: false, retryAfterSeconds };
    window.pending += 1;
    return { allowed: true, retryAfterSeconds };
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
    }
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

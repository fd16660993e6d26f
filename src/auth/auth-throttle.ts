import type { AppContext } from '../app/context.ts';
import { addressSubject } from '../http/client-address.ts';
import type { Store } from '../store/store.ts';
import { LruMap } from './lru-map.ts';

/** Addresses remembered as blocked on one instance; past this the longest-unseen go first. */
const MAX_BLOCKED = 100_000;

/**
 * Failed authentications per client address (IPv6: per /64), in fixed one-minute windows
 * counted in the shared store, so the limit holds across instances. Once an address is over
 * the limit, every authentication it attempts until the window ends is refused with 429 — a
 * correct key included, or guessing would go on — and the refusal costs no store or database
 * round trip: the block is remembered locally. Only failures touch the store; a clean address
 * is never slowed by someone else's block.
 */
export class AuthFailureThrottle {
  private readonly blocked = new LruMap<string, number>(MAX_BLOCKED);

  constructor(
    private readonly store: Store,
    readonly limitPerMinute: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether any address is blocked on this instance (the usual answer: no). */
  anyBlocked(): boolean {
    return this.blocked.size > 0;
  }

  /** Seconds before this address may authenticate again; 0 when it may now. */
  retryAfter(address: string): number {
    if (this.blocked.size === 0) return 0; // the usual case, on every authenticated request
    const subject = addressSubject(address);
    const until = this.blocked.peek(subject);
    if (until === undefined) return 0;
    const left = until - this.now();
    if (left > 0) return left / 1000;
    this.blocked.delete(subject);
    return 0;
  }

  /**
   * Counts one failed authentication. Returns the seconds to wait when the address is now over
   * its limit (the failure is then answered with 429 rather than 401), else 0.
   */
  async fail(address: string): Promise<number> {
    const subject = addressSubject(address);
    const now = this.now();
    const minute = Math.floor(now / 60_000);
    const windowEnd = (minute + 1) * 60_000;
    let total: number;
    try {
      total = await this.store.incr(`authfail:${subject}:${minute}`, 1, windowEnd - now + 5_000);
    } catch {
      return 0; // the store is down: this failure still gets its 401
    }
    if (total <= this.limitPerMinute) return 0;
    this.blocked.set(subject, windowEnd);
    return (windowEnd - now) / 1000;
  }
}

const perContext = new WeakMap<object, AuthFailureThrottle>();

/** One throttle per AppContext, shared by every route module that authenticates. */
export function authThrottle(ctx: Pick<AppContext, 'store' | 'env'>): AuthFailureThrottle {
  let throttle = perContext.get(ctx);
  if (!throttle) {
    throttle = new AuthFailureThrottle(ctx.store, ctx.env.authFailuresPerMinute);
    perContext.set(ctx, throttle);
  }
  return throttle;
}

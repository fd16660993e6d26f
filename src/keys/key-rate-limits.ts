import type { Store } from '../store/store.ts';

const WINDOW_MS = 60_000;
/** A window's counter outlives its minute a little, so a late correction still finds it. */
const COUNTER_TTL_MS = 3 * WINDOW_MS;

/** Tokens counted for a call at admission, corrected to the real usage when it settles. */
export interface TokenTicket {
  counter: string;
  estimate: number;
}

export type LimitDecision = { ok: true } | { ok: false; retryAfterSeconds: number };

/**
 * A key's `rpm` and `tpm` (docs/keys.md): fixed one-minute windows (UTC minutes) counted in the
 * shared store, so the limits hold across instances. Each check is one atomic INCRBY: a request
 * that takes the count past the limit takes its increment back and is refused, so the count
 * never admits more than the limit, however many instances race (a refused burst may, for a
 * moment, refuse a request that would have fit: never the other way round).
 */
export class KeyRateLimits {
  constructor(
    private readonly store: Store,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts one request against `rpm`. */
  async request(keyId: number, rpm: number): Promise<LimitDecision> {
    const { counter, retryAfterSeconds } = this.window('rpm', keyId);
    const count = await this.store.incr(counter, 1, COUNTER_TTL_MS);
    if (count <= rpm) return { ok: true };
    await this.store.incr(counter, -1, COUNTER_TTL_MS);
    return { ok: false, retryAfterSeconds };
  }

  /** Counts a call's estimated tokens against `tpm`; the ticket corrects them at settlement. */
  async tokens(
    keyId: number,
    tpm: number,
    estimate: number,
  ): Promise<{ ok: true; ticket: TokenTicket } | { ok: false; retryAfterSeconds: number }> {
    const { counter, retryAfterSeconds } = this.window('tpm', keyId);
    const count = await this.store.incr(counter, estimate, COUNTER_TTL_MS);
    if (count <= tpm) return { ok: true, ticket: { counter, estimate } };
    await this.store.incr(counter, -estimate, COUNTER_TTL_MS);
    return { ok: false, retryAfterSeconds };
  }

  /** The call used `actual` tokens: its window counts those instead of the estimate. */
  async correct(ticket: TokenTicket, actual: number): Promise<void> {
    const delta = Math.max(0, Math.round(actual)) - ticket.estimate;
    if (delta !== 0) await this.store.incr(ticket.counter, delta, COUNTER_TTL_MS);
  }

  private window(kind: 'rpm' | 'tpm', keyId: number): { counter: string; retryAfterSeconds: number } {
    const now = this.now();
    const minute = Math.floor(now / WINDOW_MS);
    return {
      counter: `key:${kind}:${keyId}:${minute}`,
      retryAfterSeconds: Math.max(1, Math.ceil(((minute + 1) * WINDOW_MS - now) / 1000)),
    };
  }
}

import { errorFields, type Logger } from '../ops/logger.ts';
import type { Store } from '../store/store.ts';
import { QuotaLease } from './quota-lease.ts';

const WINDOW_MS = 60_000;
/** Give-backs and extra usage reach the counter in batch, this long after the first of them. */
const FLUSH_MS = 10;

/** Tokens counted for a call at admission, corrected to the real usage when it settles. */
export interface TokenTicket {
  lease: QuotaLease;
  estimate: number;
}

export type LimitDecision = { ok: true } | { ok: false; retryAfterSeconds: number };

const OK: LimitDecision = { ok: true };

/**
 * A key's `rpm` and `tpm` (docs/keys.md): fixed one-minute windows (UTC minutes) counted in the
 * shared store, so the limits hold across instances. Each instance takes leases of a window's
 * counter ({@link QuotaLease}) and admits calls from them in memory: the counter is the sum of
 * what every instance was granted, never more than the limit, so no window admits more than the
 * limit however many instances race. What an instance holds unused may, for the rest of the
 * minute, refuse a call elsewhere that would have fit (a bounded amount, docs/keys.md).
 */
export class KeyRateLimits {
  private readonly rpm = new Map<number, QuotaLease>();
  private readonly tpm = new Map<number, QuotaLease>();
  private readonly owing = new Set<QuotaLease>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private sweptMinute = 0;

  constructor(
    private readonly store: Store,
    private readonly now: () => number = Date.now,
    private readonly log?: Pick<Logger, 'warn'>,
  ) {}

  /** Counts one request against `rpm`. */
  async request(keyId: number, rpm: number): Promise<LimitDecision> {
    const taken = this.lease('rpm', keyId, rpm).take(1, rpm);
    return taken === true || (taken !== false && (await taken)) ? OK : this.refusal();
  }

  /** Counts a call's estimated tokens against `tpm`; the ticket corrects them at settlement. */
  async tokens(
    keyId: number,
    tpm: number,
    estimate: number,
  ): Promise<{ ok: true; ticket: TokenTicket } | { ok: false; retryAfterSeconds: number }> {
    const lease = this.lease('tpm', keyId, tpm);
    const taken = lease.take(estimate, tpm);
    if (taken === true || (taken !== false && (await taken))) return { ok: true, ticket: { lease, estimate } };
    return this.refusal();
  }

  /**
   * The call used `actual` tokens: the difference goes back to (or comes from) this instance's
   * allowance; the counter hears of it in batch. A call of a window already over is ignored.
   */
  correct(ticket: TokenTicket, actual: number): void {
    const delta = Math.max(0, Math.round(actual)) - ticket.estimate;
    if (delta === 0 || ticket.lease.minute !== this.minute()) return;
    if (delta < 0) ticket.lease.giveBack(-delta);
    else ticket.lease.use(delta);
  }

  /** Sends every window's pending give-backs and extra usage to the store. */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const minute = this.minute();
    const leases = [...this.owing];
    this.owing.clear();
    await Promise.all(
      leases
        .filter((lease) => lease.minute === minute)
        .map((lease) => lease.flush().catch((err: unknown) => this.warn('flush', err))),
    );
  }

  private lease(kind: 'rpm' | 'tpm', keyId: number, limit: number): QuotaLease {
    const minute = this.minute();
    const leases = kind === 'rpm' ? this.rpm : this.tpm;
    const current = leases.get(keyId);
    if (current?.minute === minute) return current;
    if (minute !== this.sweptMinute) this.sweep(minute);
    // A new minute is a new window: the old window's allowance is dropped with its lease.
    const lease = new QuotaLease(
      this.store,
      `key:${kind}:${keyId}:${minute}`,
      minute,
      limit,
      (owing) => this.owe(owing),
      (err) => this.warn('store call', err),
    );
    leases.set(keyId, lease);
    return lease;
  }

  private owe(lease: QuotaLease): void {
    this.owing.add(lease);
    if (this.timer) return;
    this.timer = setTimeout(() => void this.flush(), FLUSH_MS);
    this.timer.unref?.();
  }

  /** Once a minute: keys that made no call this minute lose their lease. */
  private sweep(minute: number): void {
    this.sweptMinute = minute;
    for (const leases of [this.rpm, this.tpm])
      for (const [keyId, lease] of leases) if (lease.minute < minute) leases.delete(keyId);
  }

  private refusal(): { ok: false; retryAfterSeconds: number } {
    const now = this.now();
    const next = (Math.floor(now / WINDOW_MS) + 1) * WINDOW_MS;
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((next - now) / 1000)) };
  }

  private minute(): number {
    return Math.floor(this.now() / WINDOW_MS);
  }

  /** A lost give-back only refuses early until the minute ends; lost extra usage admits a little more. */
  private warn(what: string, err: unknown): void {
    this.log?.warn(`key rate limit ${what} failed`, errorFields(err));
  }
}

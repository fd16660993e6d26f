import type { Store } from '../store/store.ts';

/** A window's counter outlives its minute a little, so a late give-back still finds it. */
export const COUNTER_TTL_MS = 3 * 60_000;

interface Waiter {
  need: number;
  resolve: (admitted: boolean) => void;
  reject: (err: unknown) => void;
}

/**
 * This instance's share of one key's `rpm` or `tpm` window (docs/keys.md, "Rate limits"). The
 * shared counter counts every unit granted to any instance; a refill adds a chunk with one INCRBY
 * and keeps only the part that was under the limit (the overshoot goes straight back), so the
 * instances together are never granted more than the limit. Calls take from `available` in
 * memory; only a call it cannot cover waits for a refill, which serves every call waiting then.
 *
 * The chunk (`size`) is limit/64 at first and remaining/16 from the count a refill saw, so what
 * an instance holds unused, and can keep from the others, stays small and shrinks as the window
 * fills; under 64 it is 0 and each refill takes exactly what the waiting calls need.
 */
export class QuotaLease {
  /** Units granted to this instance and not yet taken by a call. */
  private available = 0;
  /** Usage the counter has not seen yet: > 0 a call used more than it took, < 0 a give-back. */
  private owed = 0;
  private size: number;
  private waiting: Waiter[] = [];
  private refilling = false;

  constructor(
    private readonly store: Store,
    readonly counter: string,
    readonly minute: number,
    private limit: number,
    /** Called when `owed` changes: the owner flushes it soon, in batch. */
    private readonly onOwed: (lease: QuotaLease) => void,
    /** A refill ahead of need or a give-back failed: nobody waits for it to hear the error. */
    private readonly onStoreError: (err: unknown) => void,
  ) {
    this.size = Math.floor(limit / 64);
  }

  /** `true`/`false` at once when the allowance covers `need`; otherwise after a refill. */
  take(need: number, limit: number): boolean | Promise<boolean> {
    if (limit !== this.limit) this.changeLimit(limit);
    if (this.available >= Math.max(need, 1)) {
      this.available -= need;
      // Refill ahead, so the calls after this one still find an allowance.
      if (this.size >= 2 && this.available < this.size / 2 && !this.refilling) void this.refill();
      return true;
    }
    return new Promise((resolve, reject) => {
      this.waiting.push({ need, resolve, reject });
      if (!this.refilling) void this.refill();
    });
  }

  /** A call used fewer units than it took: they serve the next calls here, up to one chunk. */
  giveBack(units: number): void {
    this.available += units;
    if (this.available > this.size) {
      this.addOwed(this.size - this.available);
      this.available = this.size;
    }
  }

  /** A call used more units than it took: from the allowance, the rest owed to the counter. */
  use(units: number): void {
    const fromAllowance = Math.min(units, this.available);
    this.available -= fromAllowance;
    if (units > fromAllowance) this.addOwed(units - fromAllowance);
  }

  /** Sends what is owed to the counter (the owner's timer calls it). */
  async flush(): Promise<void> {
    const delta = this.owed;
    this.owed = 0;
    if (delta !== 0) await this.store.incr(this.counter, delta, COUNTER_TTL_MS);
  }

  /** Single flight: one INCRBY at a time per window, serving the calls waiting when it starts. */
  private async refill(): Promise<void> {
    this.refilling = true;
    try {
      do {
        this.serve();
        const batch = this.waiting;
        this.waiting = [];
        let amount: number;
        if (batch.length > 0) {
          // Each waiting call needs more than the allowance: take their sum, at least a chunk.
          const wanted = batch.reduce((sum, w) => sum + Math.max(w.need, 1), 0);
          amount = Math.max(wanted - this.available, this.size);
        } else {
          if (this.size < 2 || this.available >= this.size / 2) break; // refilled meanwhile
          amount = this.size - this.available;
        }
        await this.grant(amount, batch);
      } while (this.waiting.length > 0);
    } finally {
      this.refilling = false;
    }
  }

  /** One INCRBY (carrying what is owed); the part over the limit and any excess go back at once. */
  private async grant(amount: number, batch: Waiter[]): Promise<void> {
    const owed = this.owed;
    this.owed = 0;
    let count: number;
    try {
      count = await this.store.incr(this.counter, amount + owed, COUNTER_TTL_MS);
    } catch (err) {
      this.owed += owed; // most likely never applied: the next INCRBY carries it
      if (batch.length === 0) this.onStoreError(err);
      for (const waiter of batch) waiter.reject(err);
      return;
    }
    const granted = Math.max(0, Math.min(amount, this.limit - (count - amount)));
    this.size = Math.floor(Math.min(this.limit / 64, Math.max(0, this.limit - count) / 16));
    this.available += granted;
    for (const waiter of batch) {
      if (this.available >= Math.max(waiter.need, 1)) {
        this.available -= waiter.need;
        waiter.resolve(true);
      } else if (granted < amount)
        waiter.resolve(false); // the window is full
      // Calls covered from memory took part of the allowance meanwhile: the next refill.
      else this.waiting.push(waiter);
    }
    this.serve();
    const excess = Math.max(0, this.available - this.size);
    this.available -= excess;
    const back = amount - granted + excess;
    // Not awaited: the connection keeps this instance's commands in order.
    if (back > 0) this.store.incr(this.counter, -back, COUNTER_TTL_MS).catch(this.onStoreError);
  }

  /** Admits the waiting calls the allowance covers now. */
  private serve(): void {
    if (this.waiting.length === 0) return;
    this.waiting = this.waiting.filter((waiter) => {
      if (this.available < Math.max(waiter.need, 1)) return true;
      this.available -= waiter.need;
      waiter.resolve(true);
      return false;
    });
  }

  /** An edited limit: what is held was granted under the old one, so it goes back. */
  private changeLimit(limit: number): void {
    this.limit = limit;
    this.size = Math.floor(limit / 64);
    if (this.available > 0) this.addOwed(-this.available);
    this.available = 0;
  }

  private addOwed(delta: number): void {
    this.owed += delta;
    this.onOwed(this);
  }
}

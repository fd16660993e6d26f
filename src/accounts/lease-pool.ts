import type { Logger } from '../ops/logger.ts';
import { errorFields } from '../ops/logger.ts';
import { GroupCommit } from '../ops/group-commit.ts';

/** A hold granted, or refused with what the owner could still hold. */
export type HoldResult = { ok: true; id: string } | { ok: false; availableUnits: bigint };

/** What a settlement needs to know of a hold: the lease row it came from and its size. */
export interface HoldRef {
  leaseId: string;
  ownerId: number;
  units: bigint;
}

/**
 * One lease to grow: by at least `min` (else nothing), by `base` when the owner can spend it, and
 * up to `want` within a share of what the owner can spend (the repositories' `leaseAmount`).
 */
export interface LeaseGrowth {
  leaseId: string;
  ownerId: number;
  min: bigint;
  base: bigint;
  want: bigint;
}

/** What a growth got, and what the owner could still spend when it was decided. */
export interface LeaseGrown {
  granted: bigint;
  spendable: bigint;
}

/**
 * The statements behind a pool: lease rows in the database, each counted in its owner's
 * `reserved_usd`, written only under the owner's row lock so concurrent instances stay exact.
 */
export interface LeaseBook {
  /** One statement for a batch of growths, one lease per owner; one answer per request, in order. */
  grow(batch: LeaseGrowth[]): Promise<LeaseGrown[]>;
  /** Pushes the leases' expiry forward; answers the ids still there (a swept lease is gone). */
  renew(ids: string[]): Promise<Set<string>>;
  /** Deletes the leases and gives their amounts back to their owners. */
  release(ids: string[]): Promise<void>;
  /** Releases any instance's expired leases (their instance died). */
  releaseExpired(): Promise<void>;
}

export interface LeasePoolOptions {
  /** A lease not renewed for this long is released by any instance's sweeper (its instance died). */
  ttlMs?: number;
  /** How often this instance renews its leases and sweeps expired ones. */
  tickMs?: number;
  /** A lease with no hold for this long goes back to its owner (checked twice as often). */
  idleMs?: number;
  /** Calls longer than this stop counting against the lease: a hold that leaked is freed at last. */
  maxHoldMs?: number;
  /** Most headroom a lease asks for, in holds of the size asked (3: always a few; benchmarks compare). */
  maxStretch?: number;
}

/** One instance's slice of an owner's spendable amount, held in the database as one lease row. */
interface Lease {
  id: string;
  ownerId: number;
  /** What the row holds, as of the last statement this instance ran on it. */
  units: bigint;
  /** Sum of the holds granted from it and not yet settled or released. */
  used: bigint;
  lastUsed: number;
  /** A growth statement in flight: other holds of the owner wait for it. */
  growing?: Promise<void>;
  /** Being returned: no new hold may come from it. */
  closing?: boolean;
  /** Headroom asked for at the next growth, in holds of the size asked (see `nextStretch`). */
  stretch: number;
  /** When it last grew. */
  grownAt: number;
}

/** Headroom of a lease, in holds: at least a few, at most this many. */
const MIN_STRETCH = 3;
const MAX_STRETCH = 1024;
/** A lease that runs short again sooner than this after growing asks for twice the headroom… */
const BUSY_MS = 200;
/** …and one that lasted longer than this asks for half. */
const CALM_MS = 2_000;

/**
 * The headroom a lease asks for next: doubled while it keeps running short within `BUSY_MS`, halved
 * when a growth lasted `CALM_MS`, so a busy owner's lease grows about once per `BUSY_MS` whatever
 * its rate of calls, and a quiet one's stays small.
 */
function nextStretch(lease: Lease, now: number, max: number): number {
  const since = now - lease.grownAt;
  if (since < BUSY_MS) return Math.min(max, lease.stretch * 2);
  if (since > CALM_MS) return Math.max(MIN_STRETCH, Math.floor(lease.stretch / 2));
  return lease.stretch;
}

/**
 * Holds on a spendable amount (an account's balance, a key's budget) for calls in flight
 * (docs/money.md). Each instance **leases** a slice of an owner's spendable amount in one statement
 * and grants holds from it in memory, so a call usually pays no statement for its hold. It is
 * exact: every local hold is covered by the lease row, settlement takes the charge out of the row
 * in the statement that charges the owner, and a lease grows (group commit) only while the owner
 * can spend more. An idle lease goes back to its owner; a dead instance's lease expires and is swept.
 */
export class LeasePool {
  private readonly leases = new Map<number, Lease>();
  /** Retired leases whose calls are still running, by lease id: returned when the last one ends. */
  private readonly closing = new Map<string, Lease>();
  private readonly holds = new Map<string, HoldRef & { since: number }>();
  private readonly growing: GroupCommit<LeaseGrowth, LeaseGrown>;
  private timer?: ReturnType<typeof setInterval>;
  private idleTimer?: ReturnType<typeof setTimeout>;
  private started = false;
  protected readonly ttlMs: number;
  private readonly tickMs: number;
  private readonly idleMs: number;
  private readonly maxHoldMs: number;
  private readonly maxStretch: number;
  /** Growth requests made (each a row of a growth statement), for benchmarks and tests. */
  growths = 0;

  constructor(
    private readonly book: LeaseBook,
    private readonly name: string,
    private readonly log: Logger,
    opts: LeasePoolOptions = {},
  ) {
    this.ttlMs = opts.ttlMs ?? 5 * 60_000;
    this.tickMs = opts.tickMs ?? 30_000;
    // Short: an idle lease still counts against what the owner's media tasks may spend.
    this.idleMs = opts.idleMs ?? 500;
    this.maxHoldMs = opts.maxHoldMs ?? 2 * 3600_000;
    this.maxStretch = Math.max(MIN_STRETCH, opts.maxStretch ?? MAX_STRETCH);
    this.growing = new GroupCommit((batch) => this.book.grow(batch), { name: `${name} lease`, log });
  }

  /** Reserves `units` (1e-10 USD) of the owner's spendable amount for one call. */
  async reserve(ownerId: number, units: bigint): Promise<HoldResult> {
    for (;;) {
      let lease = this.leases.get(ownerId);
      if (lease?.closing) lease = undefined;
      if (lease && lease.units - lease.used >= units) return this.take(lease, units);
      if (lease?.growing) {
        await lease.growing;
        continue;
      }
      if (!lease) {
        lease = {
          id: `lease:${crypto.randomUUID()}`,
          ownerId,
          units: 0n,
          used: 0n,
          lastUsed: Date.now(),
          stretch: MIN_STRETCH,
          grownAt: 0,
        };
        this.leases.set(ownerId, lease);
        this.watchIdle();
      }
      const current = lease;
      const min = units - (current.units - current.used);
      // Room for more holds of this size, so a busy owner grows its lease rarely.
      const now = Date.now();
      current.stretch = nextStretch(current, now, this.maxStretch);
      current.grownAt = now;
      const request: LeaseGrowth = {
        leaseId: current.id,
        ownerId,
        min,
        base: min + units * BigInt(MIN_STRETCH),
        want: min + units * BigInt(current.stretch),
      };
      this.growths++;
      let outcome: LeaseGrown | undefined;
      current.growing = this.growing.submit(request).then((result) => {
        outcome = result;
        current.units += result.granted;
      });
      try {
        await current.growing;
      } finally {
        current.growing = undefined;
        if (current.closing) this.returnIfDrained(current);
      }
      const result = outcome as LeaseGrown;
      if (result.granted === 0n) {
        if (current.units - current.used >= units) continue; // others freed room meanwhile
        const available = current.units - current.used + (result.spendable > 0n ? result.spendable : 0n);
        return { ok: false, availableUnits: available > 0n ? available : 0n };
      }
    }
  }

  private take(lease: Lease, units: bigint): HoldResult {
    lease.used += units;
    lease.lastUsed = Date.now();
    const id = crypto.randomUUID();
    this.holds.set(id, { leaseId: lease.id, ownerId: lease.ownerId, units, since: Date.now() });
    return { ok: true, id };
  }

  /** The lease and size of a hold, for its settlement. */
  holdOf(id: string): HoldRef | undefined {
    return this.holds.get(id);
  }

  /** The call ended without a settlement (refused, failed before any usage): its hold is free again. */
  release(id: string): void {
    const hold = this.holds.get(id);
    if (!hold) return;
    this.holds.delete(id);
    const open = this.leases.get(hold.ownerId);
    const lease = open?.id === hold.leaseId ? open : this.closing.get(hold.leaseId);
    if (!lease) return;
    lease.used -= hold.units;
    if (lease.closing) this.returnIfDrained(lease);
  }

  /** A settlement committed: its holds are done, and `taken` units (per lease) left the lease rows. */
  settled(ids: string[], taken: Map<string, bigint>): void {
    for (const id of ids) this.release(id);
    if (taken.size === 0) return;
    for (const lease of this.leases.values()) {
      const units = taken.get(lease.id);
      if (units) lease.units -= units;
    }
  }

  /**
   * These owners' leases may be stale here (a settlement failed without our knowing whether it
   * committed) or their terms changed (a key's budget was edited): no new hold comes from them.
   * Calls still holding from them settle as usual; once the last has, the row goes back to its
   * owner (the release statement takes the row's own amount, so a stale local figure is harmless).
   */
  retire(ownerIds: number[]): void {
    for (const id of ownerIds) {
      const lease = this.leases.get(id);
      if (!lease) continue;
      lease.closing = true;
      this.leases.delete(id);
      this.closing.set(lease.id, lease);
      this.returnIfDrained(lease);
    }
  }

  private returnIfDrained(lease: Lease): void {
    if (lease.used > 0n || lease.growing) return;
    this.closing.delete(lease.id);
    this.book.release([lease.id]).catch((err: unknown) => {
      // Not lost: the row is no longer renewed, so the sweeper releases it when it expires.
      this.log.error(`returning a retired ${this.name} lease failed`, { lease: lease.id, ...errorFields(err) });
    });
  }

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.tickMs);
    this.timer.unref?.();
    this.started = true;
    this.watchIdle();
  }

  /**
   * Looks for idle leases every `idleMs / 2` while this instance holds any, and not otherwise: a
   * gateway with no lease is not woken for them.
   */
  private watchIdle(): void {
    if (!this.started || this.idleTimer || this.leases.size === 0) return;
    this.idleTimer = setTimeout(
      async () => {
        await this.returnIdle();
        this.idleTimer = undefined;
        this.watchIdle();
      },
      Math.max(10, this.idleMs / 2),
    );
    this.idleTimer.unref?.();
  }

  /** Returns every lease (none may hold a call by now: the recorder was stopped first). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.started = false;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    await this.returnLeases([...this.leases.values(), ...this.closing.values()]);
    this.closing.clear();
  }

  /** Gives leases that held no call for `idleMs` back to their owners. */
  async returnIdle(): Promise<void> {
    const now = Date.now();
    const idle = [...this.leases.values()].filter((l) => l.used === 0n && !l.growing && now - l.lastUsed > this.idleMs);
    try {
      await this.returnLeases(idle);
    } catch (err) {
      this.log.error(`returning idle ${this.name} leases failed`, errorFields(err));
    }
  }

  /** Renews this instance's leases, then releases any instance's expired ones. */
  async tick(): Promise<void> {
    try {
      const now = Date.now();
      for (const [id, hold] of this.holds) if (now - hold.since > this.maxHoldMs) this.release(id);
      await this.returnIdle();
      // Retired leases still holding calls are renewed too: their settlements take from them.
      const live = [...this.leases.values(), ...this.closing.values()].map((l) => l.id);
      if (live.length) {
        const kept = await this.book.renew(live);
        // A lease swept meanwhile (this instance was cut off past the TTL) holds nothing any more.
        for (const lease of [...this.leases.values(), ...this.closing.values()])
          if (!kept.has(lease.id) && !lease.growing && lease.units > 0n) lease.units = 0n;
      }
      await this.book.releaseExpired();
    } catch (err) {
      this.log.error(`${this.name} lease renew/sweep failed`, errorFields(err));
    }
  }

  private async returnLeases(leases: Lease[]): Promise<void> {
    if (leases.length === 0) return;
    for (const lease of leases) {
      lease.closing = true;
      if (this.leases.get(lease.ownerId) === lease) this.leases.delete(lease.ownerId);
    }
    await this.book.release(leases.map((l) => l.id));
  }
}

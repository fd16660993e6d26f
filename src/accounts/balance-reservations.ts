import type { Db } from '../db/database.ts';
import type { Logger } from '../ops/logger.ts';
import { errorFields } from '../ops/logger.ts';
import { GroupCommit } from '../ops/group-commit.ts';
import { runUnprepared, type RunPrepared } from '../db/prepared.ts';
import { toUnits } from './money.ts';
import {
  type GrownLease,
  type GrowRequest,
  growLeasesStatement,
  releaseHolds,
  renewLeases,
} from './llm-reservations.repository.ts';

export { lockSpendable } from './llm-reservations.repository.ts';

/** A hold granted, or refused with what the account could still hold. */
export type HoldResult = { ok: true; id: string } | { ok: false; availableUnits: bigint };

/** What a settlement needs to know of a hold: the lease row it came from and its size. */
export interface HoldRef {
  leaseId: string;
  accountId: number;
  units: bigint;
}

export interface ReservationOptions {
  /** A lease not renewed for this long is released by any instance's sweeper (its instance died). */
  ttlMs?: number;
  /** How often this instance renews its leases and sweeps expired ones. */
  tickMs?: number;
  /** A lease with no hold for this long goes back to the account (checked twice as often). */
  idleMs?: number;
  /** Calls longer than this stop counting against the lease: a hold that leaked is freed at last. */
  maxHoldMs?: number;
}

/** One instance's slice of an account's balance, held in the database as one `llm_reservations` row. */
interface Lease {
  id: string;
  accountId: number;
  /** What the row holds, as of the last statement this instance ran on it. */
  units: bigint;
  /** Sum of the holds granted from it and not yet settled or released. */
  used: bigint;
  lastUsed: number;
  /** A growth statement in flight: other holds of the account wait for it. */
  growing?: Promise<void>;
  /** Being returned: no new hold may come from it. */
  closing?: boolean;
  /** How many more holds of the size asked the next growth asks room for (see `reserve`). */
  spare: bigint;
  /** When the lease last grew (ms). */
  grewAt: number;
}

/** Room a new lease's growth asks for, in holds of the size asked beyond the one that needs it. */
const FIRST_SPARE = 3n;
/** The most room a growth asks for: a busy account's lease grows every this many holds or so. */
const MAX_SPARE = 32n;
/** Growths closer together than this double the room the next one asks for. */
const BUSY_GROWTH_MS = 1_000;

/**
 * Holds on account balances for LLM calls in flight (docs/money.md). Admission reserves the call's
 * worst case; settlement (the usage recorder) charges the real cost; parallel calls never overdraw.
 *
 * Each instance **leases** a slice of an account's spendable balance (`balance − reserved`) in one
 * statement — a row in `llm_reservations`, counted in `accounts.reserved_usd` — and grants holds
 * from it in memory, so a call usually pays no statement for its hold. It is exact: every local
 * hold is covered by the lease row, settlement takes the charge out of the row in the same
 * statement that charges the balance, and a lease grows (group commit) only while the account can
 * spend more. An idle lease goes back to the account; a dead instance's lease expires and is swept.
 */
export class BalanceReservations {
  private readonly leases = new Map<number, Lease>();
  private readonly holds = new Map<string, HoldRef & { since: number }>();
  private readonly growing: GroupCommit<GrowRequest, { granted: bigint; spendable: bigint }>;
  private timer?: ReturnType<typeof setInterval>;
  private idleTimer?: ReturnType<typeof setInterval>;
  private readonly ttlMs: number;
  private readonly tickMs: number;
  private readonly idleMs: number;
  private readonly maxHoldMs: number;
  private readonly prepared: RunPrepared;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    opts: ReservationOptions = {},
    prepared?: RunPrepared,
  ) {
    this.prepared = prepared ?? runUnprepared(db);
    this.ttlMs = opts.ttlMs ?? 5 * 60_000;
    this.tickMs = opts.tickMs ?? 30_000;
    // Short: an idle lease still counts against what media tasks of the account may spend.
    this.idleMs = opts.idleMs ?? 500;
    this.maxHoldMs = opts.maxHoldMs ?? 2 * 3600_000;
    this.growing = new GroupCommit((batch) => this.grow(batch), { name: 'reservation lease', log });
  }

  /** Reserves `units` (1e-10 USD) of the account's spendable balance for one call. */
  async reserve(accountId: number, units: bigint): Promise<HoldResult> {
    for (;;) {
      let lease = this.leases.get(accountId);
      if (lease?.closing) lease = undefined;
      if (lease && lease.units - lease.used >= units) return this.take(lease, units);
      if (lease?.growing) {
        await lease.growing;
        continue;
      }
      if (!lease) {
        lease = {
          id: `lease:${crypto.randomUUID()}`,
          accountId,
          units: 0n,
          used: 0n,
          lastUsed: Date.now(),
          spare: FIRST_SPARE,
          grewAt: 0,
        };
        this.leases.set(accountId, lease);
      }
      const current = lease;
      const free = current.units - current.used;
      const min = units - free;
      // Room for more holds of this size, so a busy account grows its lease rarely: each growth
      // is a commit on the call's path and locks the account row the settlements lock too. The
      // room doubles while growths follow each other closely (up to MAX_SPARE holds); it is only
      // ever what the account can spend, and an idle lease goes back within `idleMs`.
      const now = Date.now();
      if (now - current.grewAt < BUSY_GROWTH_MS && current.spare < MAX_SPARE) current.spare *= 2n;
      current.grewAt = now;
      const request: GrowRequest = { leaseId: current.id, accountId, min, want: min + units * current.spare };
      let outcome: { granted: bigint; spendable: bigint };
      current.growing = this.growing.submit(request).then((result) => {
        outcome = result;
        current.units += result.granted;
      });
      try {
        await current.growing;
      } finally {
        current.growing = undefined;
      }
      // biome-ignore lint/style/noNonNullAssertion: set by the resolved growth above
      const result = outcome!;
      if (result.granted === 0n) {
        const available = current.units - current.used + (result.spendable > 0n ? result.spendable : 0n);
        if (current.units - current.used >= units) continue; // others freed room meanwhile
        return { ok: false, availableUnits: available > 0n ? available : 0n };
      }
    }
  }

  private take(lease: Lease, units: bigint): HoldResult {
    lease.used += units;
    lease.lastUsed = Date.now();
    const id = crypto.randomUUID();
    this.holds.set(id, { leaseId: lease.id, accountId: lease.accountId, units, since: Date.now() });
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
    const lease = this.leases.get(hold.accountId);
    if (lease?.id === hold.leaseId) lease.used -= hold.units;
  }

  /**
   * The usage recorder committed a settlement: its holds are done, and `taken` units (per lease)
   * left the lease rows with the charges.
   */
  settled(ids: string[], taken: Map<string, bigint>): void {
    for (const id of ids) this.release(id);
    for (const lease of this.leases.values()) {
      const units = taken.get(lease.id);
      if (units) lease.units -= units;
    }
  }

  /**
   * A settlement of these accounts failed without our knowing whether it committed: their leases'
   * local amounts may be stale, so no new hold comes from them. They are no longer renewed either,
   * so their rows expire and are swept; calls still holding from them settle as usual.
   */
  retire(accountIds: number[]): void {
    for (const id of accountIds) {
      const lease = this.leases.get(id);
      if (!lease) continue;
      lease.closing = true;
      this.leases.delete(id);
    }
  }

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.tickMs);
    this.timer.unref?.();
    this.idleTimer = setInterval(() => void this.returnIdle(), Math.max(10, this.idleMs / 2));
    this.idleTimer.unref?.();
  }

  /** Returns every lease (none may hold a call by now: the recorder was stopped first). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (this.idleTimer) clearInterval(this.idleTimer);
    await this.returnLeases([...this.leases.values()]);
  }

  /** Gives leases that held no call for `idleMs` back to their accounts. */
  async returnIdle(): Promise<void> {
    const now = Date.now();
    const idle = [...this.leases.values()].filter((l) => l.used === 0n && !l.growing && now - l.lastUsed > this.idleMs);
    try {
      await this.returnLeases(idle);
    } catch (err) {
      this.log.error('returning idle leases failed', errorFields(err));
    }
  }

  /** Renews this instance's leases, then releases any instance's expired ones. */
  async tick(): Promise<void> {
    try {
      const now = Date.now();
      for (const [id, hold] of this.holds) if (now - hold.since > this.maxHoldMs) this.release(id);
      await this.returnIdle();
      const live = [...this.leases.values()].map((l) => l.id);
      if (live.length) {
        const kept = await renewLeases(this.db, live, this.ttlMs);
        // A lease swept meanwhile (this instance was cut off past the TTL) holds nothing any more.
        for (const lease of this.leases.values())
          if (!kept.has(lease.id) && !lease.growing && lease.units > 0n) lease.units = 0n;
      }
      await this.db.transaction().execute((trx) => releaseHolds(trx, { expired: true }));
    } catch (err) {
      this.log.error('reservation renew/sweep failed', errorFields(err));
    }
  }

  private async returnLeases(leases: Lease[]): Promise<void> {
    if (leases.length === 0) return;
    for (const lease of leases) {
      lease.closing = true;
      this.leases.delete(lease.accountId);
    }
    await this.db.transaction().execute((trx) => releaseHolds(trx, { ids: leases.map((l) => l.id) }));
  }

  /**
   * One statement for a batch of lease growths (one lease per account, so no two requests share
   * an account): the accounts are locked in id order and each lease grows by as much of `want`
   * as the account can spend, or not at all when that is less than `min`.
   */
  private async grow(batch: GrowRequest[]): Promise<Array<{ granted: bigint; spendable: bigint }>> {
    const rows = await this.prepared<GrownLease>('grow_llm_leases', growLeasesStatement(this.db, batch, this.ttlMs));
    const byId = new Map(rows.map((r) => [r.id, r]));
    return batch.map((r) => {
      const row = byId.get(r.leaseId);
      return { granted: row ? toUnits(row.granted) : 0n, spendable: row ? toUnits(row.spendable) : 0n };
    });
  }
}

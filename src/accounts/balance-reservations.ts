import type { Db } from '../db/database.ts';
import type { Logger } from '../ops/logger.ts';
import { runUnprepared, type RunPrepared } from '../db/prepared.ts';
import { type LeaseBook, type LeaseGrowth, LeasePool, type LeasePoolOptions } from './lease-pool.ts';
import { toUnits } from './money.ts';
import type { GrownLease } from './lease-growth.repository.ts';
import { growLeasesStatement, releaseHolds, renewLeases } from './llm-reservations.repository.ts';

export type { HoldRef, HoldResult } from './lease-pool.ts';
export { lockSpendable } from './llm-reservations.repository.ts';
export type ReservationOptions = LeasePoolOptions;

/**
 * Holds on account balances for LLM calls in flight (docs/money.md). Admission reserves the call's
 * worst case; settlement (the usage recorder) charges the real cost; parallel calls never overdraw.
 * Each instance leases a slice of an account's spendable balance (`balance − reserved`): a row in
 * `llm_reservations`, counted in `accounts.reserved_usd` (src/accounts/lease-pool.ts).
 */
export class BalanceReservations extends LeasePool {
  constructor(db: Db, log: Logger, opts: ReservationOptions = {}, prepared?: RunPrepared) {
    const ttlMs = opts.ttlMs ?? 5 * 60_000;
    super(accountLeaseBook(db, prepared ?? runUnprepared(db), ttlMs), 'reservation', log, { ...opts, ttlMs });
  }
}

function accountLeaseBook(db: Db, prepared: RunPrepared, ttlMs: number): LeaseBook {
  return {
    async grow(batch: LeaseGrowth[]) {
      const rows = await prepared<GrownLease>('grow_llm_leases', growLeasesStatement(db, batch, ttlMs));
      const byId = new Map(rows.map((r) => [r.id, r]));
      return batch.map((r) => {
        const row = byId.get(r.leaseId);
        return { granted: row ? toUnits(row.granted) : 0n, spendable: row ? toUnits(row.spendable) : 0n };
      });
    },
    renew: (ids) => renewLeases(db, ids, ttlMs),
    release: (ids) => db.transaction().execute((trx) => releaseHolds(trx, { ids })),
    releaseExpired: () => db.transaction().execute((trx) => releaseHolds(trx, { expired: true })),
  };
}

import { type LeaseBook, type LeaseGrowth, LeasePool, type LeasePoolOptions } from '../accounts/lease-pool.ts';
import { toUnits } from '../accounts/money.ts';
import type { Db } from '../db/database.ts';
import type { Logger } from '../ops/logger.ts';
import { growKeyLeases, releaseKeyHolds, renewKeyHolds } from './key-holds.repository.ts';

/**
 * LLM holds on key budgets (docs/keys.md), held like the balance (src/accounts/lease-pool.ts): each
 * instance leases a slice of a budgeted key's room (`budget − spent − held`) as one `key_holds` row
 * and grants its calls' worst cases from it in memory, so a call of a budgeted key usually pays no
 * statement for its key hold. The settlement statement that charges the account takes the charge
 * out of the lease row and adds it to the key's spend (src/keys/key-settlement.repository.ts).
 * Keys without a budget never come here. An edited or revoked key's lease is retired at once.
 */
export class KeyBudgets extends LeasePool {
  constructor(db: Db, log: Logger, opts: LeasePoolOptions = {}) {
    const ttlMs = opts.ttlMs ?? 5 * 60_000;
    super(keyLeaseBook(db, ttlMs), 'key budget', log, { ...opts, ttlMs });
  }
}

function keyLeaseBook(db: Db, ttlMs: number): LeaseBook {
  return {
    async grow(batch: LeaseGrowth[]) {
      const rows = await growKeyLeases(db, batch, ttlMs);
      const byId = new Map(rows.map((r) => [r.id, r]));
      return batch.map((r) => {
        const row = byId.get(r.leaseId);
        return { granted: row ? toUnits(row.granted) : 0n, spendable: row ? toUnits(row.spendable) : 0n };
      });
    },
    renew: (ids) => renewKeyHolds(db, ids, ttlMs),
    release: (ids) => releaseKeyHolds(db, { ids }),
    releaseExpired: () => releaseKeyHolds(db, { expired: true }),
  };
}

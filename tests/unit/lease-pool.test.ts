import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { type LeaseBook, type LeaseGrowth, LeasePool } from '../../src/accounts/lease-pool.ts';
import { Logger } from '../../src/ops/logger.ts';

/**
 * The lease pool against an in-memory book that grants as the repositories' statements do
 * (`leaseAmount`: base, or up to want within a 32nd of what the owner can spend). Several pools
 * stand for several instances sharing one owner.
 */
function memoryBook(spendable: bigint, delayMs = 0) {
  const rows = new Map<string, bigint>();
  const state = { spendable, statements: 0 };
  const book: LeaseBook = {
    async grow(batch: LeaseGrowth[]) {
      state.statements++;
      if (delayMs) await Bun.sleep(delayMs);
      return batch.map((r) => {
        const left = state.spendable;
        if (r.min <= 0n || left < r.min) return { granted: 0n, spendable: left };
        const share = left / 32n;
        const wanted = r.base > (r.want < share ? r.want : share) ? r.base : r.want < share ? r.want : share;
        const granted = wanted < left ? wanted : left;
        state.spendable -= granted;
        rows.set(r.leaseId, (rows.get(r.leaseId) ?? 0n) + granted);
        return { granted, spendable: left };
      });
    },
    async renew(ids) {
      return new Set(ids.filter((id) => rows.has(id)));
    },
    async release(ids) {
      for (const id of ids) {
        state.spendable += rows.get(id) ?? 0n;
        rows.delete(id);
      }
    },
    async releaseExpired() {},
  };
  /** A settlement: `units` leave the lease row for good (charged). */
  const charge = (leaseId: string, units: bigint) => rows.set(leaseId, (rows.get(leaseId) ?? 0n) - units);
  return { book, state, rows, charge };
}

const log = new Logger('error');

describe('lease pool', () => {
  test('holds granted by any number of instances never exceed what the owner can spend', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.array(fc.integer({ min: 1, max: 50 }), { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 0, max: 400 }),
        async (instances, sizes, budget) => {
          const { book } = memoryBook(BigInt(budget), 1);
          const pools = Array.from({ length: instances }, () => new LeasePool(book, 'test', log));
          const results = await Promise.all(sizes.map((s, i) => pools[i % instances]?.reserve(1, BigInt(s))));
          const held = results.reduce((n, r, i) => n + (r?.ok ? (sizes[i] as number) : 0), 0);
          expect(held).toBeLessThanOrEqual(budget);
          // Nothing was refused that the owner could still have covered on its own.
          const smallestRefused = Math.min(...sizes.filter((_, i) => !results[i]?.ok));
          if (Number.isFinite(smallestRefused) && instances === 1) expect(budget - held).toBeLessThan(smallestRefused);
        },
      ),
      { numRuns: 150 },
    );
  });

  test('a busy owner grows its lease rarely: the headroom doubles while it keeps running short', async () => {
    const { book, state, charge } = memoryBook(10n ** 12n);
    const fixed = new LeasePool(book, 'fixed', log, { maxStretch: 3 });
    const adaptive = new LeasePool(book, 'adaptive', log);
    const cycle = async (pool: LeasePool, owner: number) => {
      for (let i = 0; i < 2000; i++) {
        const held = await pool.reserve(owner, 1000n);
        if (!held.ok) throw new Error('refused');
        const lease = pool.holdOf(held.id)?.leaseId as string;
        charge(lease, 100n);
        pool.settled([held.id], new Map([[lease, 100n]]));
      }
    };
    await cycle(fixed, 1);
    await cycle(adaptive, 2);
    // Three holds of headroom, each call charging a tenth of its hold: a growth every ~30 calls.
    expect(fixed.growths).toBeGreaterThan(50);
    expect(adaptive.growths).toBeLessThan(fixed.growths / 4);
    expect(state.statements).toBe(fixed.growths + adaptive.growths);
  });

  test('a started pool gives an idle lease back by itself, each time one is taken after the last went back', async () => {
    const { book, state } = memoryBook(1000n);
    const pool = new LeasePool(book, 'test', log, { idleMs: 20 });
    pool.start();
    try {
      for (let round = 0; round < 2; round++) {
        const hold = await pool.reserve(1, 10n);
        if (!hold.ok) throw new Error('refused');
        expect(state.spendable).toBeLessThan(1000n);
        pool.release(hold.id);
        const deadline = Date.now() + 2000;
        while (state.spendable !== 1000n && Date.now() < deadline) await Bun.sleep(5);
        expect(state.spendable).toBe(1000n);
      }
    } finally {
      await pool.stop();
    }
  });

  test('a retired lease goes back to its owner once its last call has settled', async () => {
    const { book, state } = memoryBook(10_000n);
    const pool = new LeasePool(book, 'test', log);
    const a = await pool.reserve(1, 100n);
    const b = await pool.reserve(1, 100n);
    if (!a.ok || !b.ok) throw new Error('refused');
    expect(state.spendable).toBeLessThan(10_000n);
    pool.retire([1]);
    pool.release(a.id);
    await Bun.sleep(1);
    expect(state.spendable).toBeLessThan(10_000n);
    pool.settled([b.id], new Map());
    await Bun.sleep(1);
    expect(state.spendable).toBe(10_000n);
    // A new hold comes from a new lease.
    const c = await pool.reserve(1, 100n);
    expect(c.ok && pool.holdOf(c.id)?.leaseId).not.toBe(false);
  });
});

import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { KeyRateLimits } from '../../src/keys/key-rate-limits.ts';
import { MemoryStore } from '../../src/store/memory-store.ts';
import type { Store } from '../../src/store/store.ts';

/**
 * The leases behind rpm and tpm (docs/keys.md, "Rate limits"): calls are admitted from a local
 * allowance taken from the shared counter in chunks, and however instances and round trips
 * interleave, the instances together never admit more than the limit.
 */
const MINUTE = 60_000 * 1000;
const now = () => MINUTE + 15_000;

/** A store whose INCRBYs each wait `delays[i]` microtask turns before and after running. */
function interleavingStore(delays: number[] = [0]) {
  const inner = new MemoryStore();
  let i = 0;
  const yields = async (n: number) => {
    for (let k = 0; k < n; k++) await Promise.resolve();
  };
  const stats = { incrs: 0 };
  const store: Store = Object.assign(Object.create(inner) as MemoryStore, {
    async incr(key: string, by: number, ttlMs: number) {
      stats.incrs++;
      await yields(delays[i++ % delays.length] ?? 0);
      const count = await inner.incr(key, by, ttlMs);
      await yields(delays[i++ % delays.length] ?? 0);
      return count;
    },
  });
  const counter = async (kind: string, keyId: number) => Number((await inner.get(`key:${kind}:${keyId}:1000`)) ?? 0);
  return { store, stats, counter };
}

describe('quota leases', () => {
  test('calls are admitted from the allowance: one INCRBY per chunk, refilled ahead, a covered call never waits', async () => {
    let blocked = false;
    const { store: base, stats, counter } = interleavingStore();
    const store = Object.assign(Object.create(base) as Store, {
      incr: (key: string, by: number, ttl: number) =>
        blocked ? new Promise<number>(() => {}) : base.incr(key, by, ttl),
    });
    const limits = new KeyRateLimits(store, now);
    for (let i = 0; i < 1000; i++) expect((await limits.request(1, 6400)).ok).toBe(true);
    expect(stats.incrs).toBeLessThanOrEqual(25); // chunks of 100 (6400/64), topped up ahead of need
    expect(await counter('rpm', 1)).toBeLessThanOrEqual(1000 + 100);
    // The store stops answering: calls the allowance covers still go through at once.
    blocked = true;
    expect((await limits.request(1, 6400)).ok).toBe(true);
  });

  test('a limit under 64 takes exactly what each call needs: one INCRBY per call, nothing held', async () => {
    const { store, stats, counter } = interleavingStore();
    const limits = new KeyRateLimits(store, now);
    for (let i = 0; i < 7; i++) expect((await limits.request(2, 7)).ok).toBe(true);
    expect(stats.incrs).toBe(7);
    expect(await counter('rpm', 2)).toBe(7);
    expect(await limits.request(2, 7)).toEqual({ ok: false, retryAfterSeconds: 45 });
    expect(await counter('rpm', 2)).toBe(7);
  });

  test('two instances share one limit exactly; what one holds unused stays under limit/64 and shrinks', async () => {
    const { store, counter } = interleavingStore();
    const [a, b] = [new KeyRateLimits(store, now), new KeyRateLimits(store, now)];
    let admitted = 0;
    let heldAtFirstRefusal = -1;
    for (let i = 0; i < 7000; i++) {
      const decision = await (i % 3 ? a : b).request(3, 6400);
      if (decision.ok) admitted++;
      else if (heldAtFirstRefusal < 0) heldAtFirstRefusal = (await counter('rpm', 3)) - admitted;
    }
    expect(admitted).toBe(6400);
    expect(heldAtFirstRefusal).toBeGreaterThanOrEqual(0);
    expect(heldAtFirstRefusal).toBeLessThanOrEqual(6400 / 64 / 16 + 1); // the chunk shrank to remaining/16
  });

  test('tpm corrections stay in memory and reach the store in batch; extra usage is counted', async () => {
    const { store, stats, counter } = interleavingStore();
    const limits = new KeyRateLimits(store, now);
    let used = 0;
    for (let i = 0; i < 200; i++) {
      const taken = await limits.tokens(4, 1_000_000, 100);
      if (!taken.ok) throw new Error('refused');
      const actual = i % 10 === 0 ? 40_000 : 30; // now and then far more than the estimate
      limits.correct(taken.ticket, actual);
      used += actual;
    }
    await limits.flush();
    expect(stats.incrs).toBeLessThanOrEqual(30);
    const count = await counter('tpm', 4);
    expect(count).toBeGreaterThanOrEqual(used);
    expect(count - used).toBeLessThanOrEqual(1_000_000 / 64); // at most one chunk held here
  });

  test('a call waiting for a refill is not refused because calls covered meanwhile took the allowance', async () => {
    const { store } = interleavingStore([3]);
    const limits = new KeyRateLimits(store, now);
    expect((await limits.tokens(6, 640, 5)).ok).toBe(true); // a chunk of 10 (640/64): 5 left
    const waiting = limits.tokens(6, 640, 15); // needs a refill of 10
    expect((await limits.tokens(6, 640, 5)).ok).toBe(true); // covered at once, from the 5
    expect((await waiting).ok).toBe(true);
  });

  test('a new minute is a new window: the old allowance is dropped, a late correction ignored', async () => {
    let t = MINUTE + 59_000;
    const inner = new MemoryStore();
    const limits = new KeyRateLimits(inner, () => t);
    const taken = await limits.tokens(5, 6400, 10);
    if (!taken.ok) throw new Error('refused');
    t += 2_000;
    expect((await limits.tokens(5, 6400, 10)).ok).toBe(true);
    limits.correct(taken.ticket, 0);
    await limits.flush();
    expect(await inner.get('key:tpm:5:1000')).toBe('100');
    expect(await inner.get('key:tpm:5:1001')).toBe('100');
  });
});

describe('quota leases, any interleaving (property)', () => {
  const arbitraryDelays = fc.array(fc.integer({ min: 0, max: 6 }), { minLength: 1, maxLength: 16 });

  test('rpm: N parallel calls over two instances admit min(N, limit), less at most one chunk per instance', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 400 }),
        fc.array(fc.record({ onA: fc.boolean(), startTurns: fc.integer({ min: 0, max: 40 }) }), {
          minLength: 1,
          maxLength: 600,
        }),
        arbitraryDelays,
        async (limit, calls, delays) => {
          const { store } = interleavingStore(delays);
          const [a, b] = [new KeyRateLimits(store, now), new KeyRateLimits(store, now)];
          const outcomes = await Promise.all(
            calls.map(async (c) => {
              for (let k = 0; k < c.startTurns; k++) await Promise.resolve();
              return (c.onA ? a : b).request(9, limit);
            }),
          );
          const admitted = outcomes.filter((o) => o.ok).length;
          expect(admitted).toBeLessThanOrEqual(limit);
          expect(admitted).toBeGreaterThanOrEqual(Math.min(calls.length, limit - 2 * Math.floor(limit / 64)));
        },
      ),
      { numRuns: 150 },
    );
  });

  test('tpm: what admitted calls hold (estimate, then real usage) never passes the limit', async () => {
    const call = fc.record({
      onA: fc.boolean(),
      startTurns: fc.integer({ min: 0, max: 40 }),
      estimate: fc.integer({ min: 0, max: 60 }),
      usedShare: fc.double({ min: 0, max: 1, noNaN: true }),
      settleTurns: fc.integer({ min: 0, max: 8 }),
      flush: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 3000 }),
        fc.array(call, { minLength: 1, maxLength: 200 }),
        arbitraryDelays,
        async (limit, calls, delays) => {
          const { store } = interleavingStore(delays);
          const [a, b] = [new KeyRateLimits(store, now), new KeyRateLimits(store, now)];
          let held = 0;
          await Promise.all(
            calls.map(async (c) => {
              const limits = c.onA ? a : b;
              for (let k = 0; k < c.startTurns; k++) await Promise.resolve();
              const taken = await limits.tokens(11, limit, c.estimate);
              if (!taken.ok) return;
              held += c.estimate;
              expect(held).toBeLessThanOrEqual(limit);
              for (let k = 0; k < c.settleTurns; k++) await Promise.resolve();
              const used = Math.floor(c.estimate * c.usedShare);
              limits.correct(taken.ticket, used);
              held -= c.estimate - used;
              if (c.flush) await limits.flush();
            }),
          );
        },
      ),
      { numRuns: 150 },
    );
  });
});

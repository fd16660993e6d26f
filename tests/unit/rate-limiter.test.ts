import { expect, test } from 'bun:test';
import { RateLimiter } from '../../src/ops/rate-limiter.ts';
import { MemoryStore } from '../../src/store/memory-store.ts';

test('a key gets `limit` requests per minute window, then a Retry-After to the window end', async () => {
  let now = 60_000 * 1000 + 15_000; // 15 s into a minute
  const store = new MemoryStore(() => now);
  const limiter = new RateLimiter(store, 1_000_000, () => now);
  const decisions = Array.from({ length: 4 }, () => limiter.check('k1', 3));
  expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false]);
  expect(decisions[3]!.retryAfterSeconds).toBe(45);
  expect(limiter.check('k2', 3).allowed).toBe(true);
  await limiter.flush();
  expect(await store.get('rl:k1:1000')).toBe('3');
  now += 45_000; // next window
  expect(limiter.check('k1', 3).allowed).toBe(true);
  limiter.stop();
});

test('counts from other instances, learned at sync, count against the budget', async () => {
  const now = 120_000_000;
  const store = new MemoryStore(() => now);
  const a = new RateLimiter(store, 1_000_000, () => now);
  const b = new RateLimiter(store, 1_000_000, () => now);
  for (let i = 0; i < 4; i++) expect(a.check('shared', 5).allowed).toBe(true);
  await a.flush();
  expect(b.check('shared', 5).allowed).toBe(true);
  await b.flush(); // b learns the global total (5)
  expect(b.check('shared', 5).allowed).toBe(false);
  a.stop();
  b.stop();
});

test('requests counted but still on their way to the store count against the budget', async () => {
  const now = 180_000_000;
  const store = new MemoryStore(() => now);
  // A store round trip that has not come back yet, as Redis under load.
  let arrive!: () => void;
  const slow = Object.assign(Object.create(store), {
    incr: async (key: string, by: number, ttlMs: number) => {
      await new Promise<void>((resolve) => {
        arrive = resolve;
      });
      return store.incr(key, by, ttlMs);
    },
  });
  const limiter = new RateLimiter(slow, 1_000_000, () => now);
  for (let i = 0; i < 3; i++) expect(limiter.check('busy', 3).allowed).toBe(true);
  const flushing = limiter.flush();
  expect(limiter.check('busy', 3).allowed).toBe(false);
  arrive();
  await flushing;
  expect(limiter.check('busy', 3).allowed).toBe(false);
  limiter.stop();
});

test('counts reach the store by themselves within syncMs, and a store that failed is tried again', async () => {
  const store = new MemoryStore();
  let failures = 1;
  const flaky = Object.assign(Object.create(store), {
    incr: async (key: string, by: number, ttlMs: number) => {
      if (failures-- > 0) throw new Error('store unreachable');
      return store.incr(key, by, ttlMs);
    },
  });
  const limiter = new RateLimiter(flaky, 20);
  const key = `rl:self:${Math.floor(Date.now() / 60_000)}`;
  expect(limiter.check('self', 10).allowed).toBe(true);
  expect(limiter.check('self', 10).allowed).toBe(true);
  // The first flush fails; the counts stay pending and the next flush, scheduled by the first, sends them.
  const deadline = Date.now() + 2000;
  while ((await store.get(key)) !== '2' && Date.now() < deadline) await Bun.sleep(5);
  expect(await store.get(key)).toBe('2');
  expect(failures).toBe(-1);
  limiter.stop();
});

test('a request counts against its key and its account at once; refused by either, it counts against neither', async () => {
  const now = 240_000_000 + 10_000;
  const store = new MemoryStore(() => now);
  const limiter = new RateLimiter(store, 1_000_000, () => now);
  const call = (key: string) => limiter.checkAll([`key:${key}`, 3], ['account:1', 5]).allowed;
  expect([call('a'), call('a'), call('a'), call('a')]).toEqual([true, true, true, false]);
  // The account has 2 left whichever key asks; the refused call above took nothing from it.
  expect([call('b'), call('b'), call('b')]).toEqual([true, true, false]);
  await limiter.flush();
  expect(await store.get('rl:account:1:4000')).toBe('5');
  expect(await store.get('rl:key:b:4000')).toBe('2');
  limiter.stop();
});

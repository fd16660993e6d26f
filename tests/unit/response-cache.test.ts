import { expect, test } from 'bun:test';
import { ResponseCache } from '../../src/llm/response-cache.ts';
import { Logger } from '../../src/ops/logger.ts';
import { MemoryStore } from '../../src/store/memory-store.ts';

/**
 * What one account's cached answers take of the shared store is bounded (src/llm/response-cache.ts):
 * counted atomically by the day each answer expires, so the count is what is stored now, not a
 * running total; past the bound the account's answers are not cached; another account caches
 * as ever.
 */
const answer = (n: number) => ({ kind: 'json-text' as const, text: 'x'.repeat(3_000), headers: { n: String(n) } });

test("an account's cached answers are bounded in bytes; another account's are not held back", async () => {
  const store = new MemoryStore();
  const cache = new ResponseCache(store, new Logger('silent'), 10_000);
  for (let i = 0; i < 5; i++) await cache.put(1, `k1-${i}`, answer(i), 3600);
  const stored = await Promise.all([0, 1, 2, 3, 4].map((i) => cache.get(`k1-${i}`)));
  // Three answers of about 3 KB fit 10 KB; the fourth and fifth are not kept.
  expect(stored.map((a) => a !== undefined)).toEqual([true, true, true, false, false]);
  await cache.put(2, 'k2', answer(9), 60);
  expect(await cache.get('k2')).toBeDefined();
  await store.close();
});

test('the count follows what is stored: answers that expired no longer count, however often the account caches', async () => {
  let now = Date.UTC(2026, 10, 28, 12);
  const realNow = Date.now;
  Date.now = () => now;
  try {
    const store = new MemoryStore(() => now);
    const cache = new ResponseCache(store, new Logger('silent'), 10_000);
    // A minute's answers, again and again for two days: never more than three live at once.
    for (let i = 0; i < 48; i++) {
      await cache.put(1, `k-${i}`, answer(i), 60);
      expect(await cache.get(`k-${i}`)).toBeDefined();
      now += 3_600_000;
    }
    // Concurrent puts are counted, none lost: the count stops them once they are in.
    await Promise.all([0, 1, 2, 3].map((i) => cache.put(3, `c-${i}`, answer(i), 86_400)));
    await cache.put(3, 'c-late', answer(9), 86_400);
    expect(await cache.get('c-late')).toBeUndefined();
    await store.close();
  } finally {
    Date.now = realNow;
  }
});

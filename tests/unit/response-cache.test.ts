import { expect, test } from 'bun:test';
import { ResponseCache } from '../../src/llm/response-cache.ts';
import { Logger } from '../../src/ops/logger.ts';
import { MemoryStore } from '../../src/store/memory-store.ts';

/**
 * What one account's cached answers take of the shared store is bounded (src/llm/response-cache.ts):
 * past the bound its answers are not cached until what it stored expires; other accounts cache
 * as ever. The count lives as long as the longest-lived answer it counts.
 */
test("an account's cached answers are bounded in bytes; another account's are not held back", async () => {
  const store = new MemoryStore();
  const cache = new ResponseCache(store, new Logger('silent'), 10_000);
  const answer = (n: number) => ({ kind: 'json-text' as const, text: 'x'.repeat(3_000), headers: { n: String(n) } });
  for (let i = 0; i < 5; i++) await cache.put(1, `k1-${i}`, answer(i), 3600);
  const stored = await Promise.all([0, 1, 2, 3, 4].map((i) => cache.get(`k1-${i}`)));
  // Three answers of about 3 KB fit 10 KB; the fourth and fifth are not kept.
  expect(stored.map((a) => a !== undefined)).toEqual([true, true, true, false, false]);
  await cache.put(2, 'k2', answer(9), 60);
  expect(await cache.get('k2')).toBeDefined();
  // The count outlives the shorter-lived answers it counts: it lives as long as the longest.
  await cache.put(3, 'k3-long', answer(1), 3600);
  await cache.put(3, 'k3-short', answer(2), 60);
  expect(await store.ttl('llmcache:bytes:3')).toBeGreaterThan(3_000_000);
});

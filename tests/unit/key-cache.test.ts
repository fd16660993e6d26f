import { expect, test } from 'bun:test';
import { hashApiKey } from '../../src/auth/api-keys.ts';
import { KeyCache } from '../../src/auth/key-cache.ts';
import { LruMap } from '../../src/auth/lru-map.ts';
import type { Db } from '../../src/db/database.ts';
import { MemoryStore } from '../../src/store/memory-store.ts';

/** A key table in memory, counting reads, in place of the database. */
function keyTable() {
  const rows = new Map<string, { accountId: number; keyId: number; keyHash: string }>();
  const reads: string[] = [];
  let nextId = 1;
  return {
    reads,
    add(key: string) {
      const keyHash = hashApiKey(key);
      rows.set(keyHash, { accountId: nextId, keyId: nextId++, keyHash });
    },
    remove(key: string) {
      rows.delete(hashApiKey(key));
    },
    findKey: async (keyHash: string) => {
      reads.push(keyHash);
      return rows.get(keyHash);
    },
  };
}

const db = {} as Db;

test('LruMap evicts the least recently used entry, not everything', () => {
  const lru = new LruMap<string, number>(3);
  lru.set('a', 1);
  lru.set('b', 2);
  lru.set('c', 3);
  expect(lru.get('a')).toBe(1); // a is now the most recent
  lru.set('d', 4); // evicts b
  expect([...lru.keys()]).toEqual(['c', 'a', 'd']);
  expect(lru.peek('b')).toBeUndefined();
  lru.set('c', 30); // re-set moves to the end without evicting
  expect([...lru.keys()]).toEqual(['a', 'd', 'c']);
  expect(lru.size).toBe(3);
  expect(() => new LruMap(0)).toThrow();
});

test('a full key cache drops its coldest keys: a key in constant use is never read again', async () => {
  const table = keyTable();
  const cache = new KeyCache(db, new MemoryStore(), { maxEntries: 100, findKey: table.findKey });
  table.add('hot');
  for (let i = 0; i < 1000; i++) table.add(`cold-${i}`);
  expect(await cache.authenticate('hot')).toEqual({ accountId: 1, keyId: 1 });
  for (let i = 0; i < 1000; i++) {
    expect(await cache.authenticate(`cold-${i}`)).not.toBeNull();
    expect(await cache.authenticate('hot')).not.toBeNull();
  }
  // One read for the hot key in all; the cache never held more than its bound.
  expect(table.reads.filter((h) => h === hashApiKey('hot'))).toHaveLength(1);
  expect(cache.size.hits).toBe(100);
  // The oldest cold keys were evicted (read again), the newest are still cached.
  const before = table.reads.length;
  await cache.authenticate('cold-999');
  expect(table.reads.length).toBe(before);
  await cache.authenticate('cold-0');
  expect(table.reads.length).toBe(before + 1);
});

test('unknown keys are cached briefly, in their own bounded map, so a flood of them evicts no real key', async () => {
  let now = 1_000_000;
  const table = keyTable();
  const cache = new KeyCache(db, new MemoryStore(), {
    maxEntries: 10,
    maxMisses: 50,
    missTtlMs: 5_000,
    now: () => now,
    findKey: table.findKey,
  });
  table.add('real');
  await cache.authenticate('real');
  // Repeating a wrong key costs one read per 5 s, not one per request.
  for (let i = 0; i < 20; i++) expect(await cache.authenticate('wrong')).toBeNull();
  expect(table.reads.filter((h) => h === hashApiKey('wrong'))).toHaveLength(1);
  now += 5_001;
  expect(await cache.authenticate('wrong')).toBeNull();
  expect(table.reads.filter((h) => h === hashApiKey('wrong'))).toHaveLength(2);
  // Thousands of made-up keys: bounded, and the real key stays cached.
  for (let i = 0; i < 2000; i++) await cache.authenticate(`made-up-${i}`);
  expect(cache.size.misses).toBe(50);
  const reads = table.reads.length;
  expect(await cache.authenticate('real')).not.toBeNull();
  expect(table.reads.length).toBe(reads);
});

test('a key that becomes valid is not held back by its negative entry once a key-change message arrives', async () => {
  const store = new MemoryStore();
  const table = keyTable();
  const a = new KeyCache(db, store, { missTtlMs: 60_000, findKey: table.findKey });
  const b = new KeyCache(db, store, { missTtlMs: 60_000, findKey: table.findKey });
  await Promise.all([a.start(), b.start()]);
  table.add('old');
  expect(await b.authenticate('old')).not.toBeNull();
  expect(await b.authenticate('new')).toBeNull(); // cached as unknown for a minute
  // Instance a regenerates: the new key exists, the old one is revoked, and b is told.
  table.add('new');
  table.remove('old');
  await a.revoke([hashApiKey('old')]);
  await Bun.sleep(5);
  expect(await b.authenticate('old')).toBeNull();
  expect(await b.authenticate('new')).not.toBeNull();
});

test('a read that started before a key change does not cache its (possibly stale) answer', async () => {
  const store = new MemoryStore();
  const table = keyTable();
  table.add('k');
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const cache = new KeyCache(db, store, {
    findKey: async (hash) => {
      const row = await table.findKey(hash);
      await gate;
      return row;
    },
  });
  await cache.start();
  const pending = cache.authenticate('k');
  table.remove('k');
  await cache.revoke([hashApiKey('k')]);
  release();
  await pending; // answered from the read in flight, but not kept
  expect(await cache.authenticate('k')).toBeNull();
});

import { afterAll, describe, expect, test } from 'bun:test';
import { MemoryStore } from '../../src/store/memory-store.ts';
import { RedisStore } from '../../src/store/redis-store.ts';
import type { Store } from '../../src/store/store.ts';
import { REDIS_URL } from '../helpers/services.ts';

const stores: Array<{ name: string; make: () => Promise<Store> }> = [
  { name: 'memory', make: async () => new MemoryStore() },
  {
    name: 'redis',
    make: async () => {
      const store = new RedisStore(REDIS_URL, `gw-unit-${crypto.randomUUID()}:`);
      await store.connect();
      return store;
    },
  },
];

for (const { name, make } of stores) {
  describe(`store [${name}]`, () => {
    const opened: Store[] = [];
    const open = async () => {
      const s = await make();
      opened.push(s);
      return s;
    };
    afterAll(async () => {
      await Promise.all(opened.map((s) => s.close()));
    });

    test('get/set/del with TTL', async () => {
      const store = await open();
      expect(await store.get('missing')).toBeNull();
      await store.set('a', '1');
      expect(await store.get('a')).toBe('1');
      expect(await store.ttl('a')).toBe(-1);
      await store.set('b', '2', 80);
      expect(await store.get('b')).toBe('2');
      // Several at once, in order, missing ones null.
      expect(await store.getMany(['a', 'missing', 'b'])).toEqual(['1', null, '2']);
      expect(await store.getMany([])).toEqual([]);
      const ttl = await store.ttl('b');
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(80);
      await Bun.sleep(120);
      expect(await store.get('b')).toBeNull();
      await store.del('a');
      expect(await store.get('a')).toBeNull();
    });

    test('incr is atomic and sets the expiry only on creation', async () => {
      const store = await open();
      const results = await Promise.all(Array.from({ length: 50 }, () => store.incr('counter', 2, 1000)));
      expect(results.sort((x, y) => x - y)).toEqual(Array.from({ length: 50 }, (_, i) => (i + 1) * 2));
      const ttl = await store.ttl('counter');
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(1000);
      await store.incr('short', 1, 60);
      await Bun.sleep(100);
      expect(await store.incr('short', 1, 60)).toBe(1);
    });

    test('publish reaches every subscriber until it unsubscribes', async () => {
      const store = await open();
      const got: string[] = [];
      const unsubscribe = await store.subscribe('news', (m) => got.push(`a:${m}`));
      await store.subscribe('news', (m) => got.push(`b:${m}`));
      await store.publish('news', 'one');
      await Bun.sleep(50);
      expect(got.sort()).toEqual(['a:one', 'b:one']);
      await unsubscribe();
      await store.publish('news', 'two');
      await Bun.sleep(50);
      expect(got.sort()).toEqual(['a:one', 'b:one', 'b:two']);
      expect(await store.ping()).toBe(true);
    });
  });
}

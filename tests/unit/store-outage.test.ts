import { afterAll, expect, test } from 'bun:test';
import { ActiveKeys } from '../../src/dashboard/active-keys.ts';
import { MemoryStore } from '../../src/store/memory-store.ts';
import { RedisStore } from '../../src/store/redis-store.ts';
import { startCuttableProxy } from '../helpers/cuttable-proxy.ts';
import { REDIS_URL } from '../helpers/services.ts';

/**
 * What the caches' invalidation messages do when Redis is briefly away (src/store/redis-store.ts):
 * a message the store could not send is sent once Redis is back, never lost with an error its
 * caller cannot act on; and a subscriber whose connection came back is told it may have missed
 * messages, so the caches built on them drop what they hold.
 */
const redis = new URL(REDIS_URL);
const target = { host: redis.hostname, port: Number(redis.port || 6379) };
const closing: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const close of closing.reverse()) await close().catch(() => undefined);
});

test('a message published while Redis is away is delivered once it is back, in order', async () => {
  const proxy = await startCuttableProxy(target);
  const prefix = `gw-outage-${crypto.randomUUID()}:`;
  const behind = new RedisStore(`redis://127.0.0.1:${proxy.port}`, prefix);
  const direct = new RedisStore(REDIS_URL, prefix);
  closing.push(
    () => proxy.close(),
    () => behind.close(),
    () => direct.close(),
  );
  await Promise.all([behind.connect(), direct.connect()]);
  const got: string[] = [];
  await direct.subscribe('auth:revoked', (m) => got.push(m));
  await behind.publish('auth:revoked', 'before');
  await proxy.cut();
  // It was a rejection (the revoke's answer a 500, its retry a 404) and the message was gone.
  await behind.publish('auth:revoked', 'during-1');
  await behind.publish('auth:revoked', 'during-2');
  await Bun.sleep(300);
  expect(got).toEqual(['before']);
  await proxy.restore();
  for (let i = 0; i < 100 && got.length < 3; i++) await Bun.sleep(50);
  expect(got).toEqual(['before', 'during-1', 'during-2']);
  await behind.publish('auth:revoked', 'after');
  for (let i = 0; i < 40 && got.length < 4; i++) await Bun.sleep(25);
  expect(got).toEqual(['before', 'during-1', 'during-2', 'after']);
  // Many while away, and more while those are being sent again: every one, once, in order.
  await proxy.cut();
  const away = Array.from({ length: 20 }, (_, i) => `away-${i}`);
  for (const m of away) await behind.publish('auth:revoked', m);
  await proxy.restore();
  const racing = Array.from({ length: 10 }, (_, i) => `racing-${i}`);
  for (const m of racing) {
    await behind.publish('auth:revoked', m);
    await Bun.sleep(30);
  }
  const all = ['before', 'during-1', 'during-2', 'after', ...away, ...racing];
  for (let i = 0; i < 200 && got.length < all.length; i++) await Bun.sleep(50);
  await Bun.sleep(200);
  expect(got).toEqual(all);
}, 30_000);

test('a subscriber whose connection came back is told it may have missed messages', async () => {
  const proxy = await startCuttableProxy(target);
  const store = new RedisStore(`redis://127.0.0.1:${proxy.port}`, `gw-outage-${crypto.randomUUID()}:`);
  closing.push(
    () => proxy.close(),
    () => store.close(),
  );
  await store.connect();
  let resubscribed = 0;
  store.onResubscribed(() => resubscribed++);
  await store.subscribe('auth:revoked', () => {});
  expect(resubscribed).toBe(0);
  await proxy.cut();
  await Bun.sleep(200);
  await proxy.restore();
  for (let i = 0; i < 100 && resubscribed === 0; i++) await Bun.sleep(50);
  expect(resubscribed).toBe(1);
}, 20_000);

test('a dashboard session’s key revoked while its row was being read is not cached as active', async () => {
  const store = new MemoryStore();
  let release: () => void = () => {};
  let reads = 0;
  const keys = new ActiveKeys({} as never, store, async (keyHash) => {
    reads++;
    // The row as it was before the revocation committed, returned after it was announced.
    if (reads === 1) await new Promise<void>((resolve) => (release = resolve));
    return { accountId: 1, keyId: 7, keyHash, policy: undefined as never };
  });
  const hash = 'ab'.repeat(32);
  const first = keys.lookup(hash);
  await Bun.sleep(10);
  await store.publish('auth:revoked', hash);
  await Bun.sleep(10);
  release();
  await first;
  // The next lookup reads the row again (it was answered from a 10-minute cache before).
  await keys.lookup(hash);
  expect(reads).toBe(2);
});

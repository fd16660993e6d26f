import { afterAll, expect, test } from 'bun:test';
import { AuthFailureThrottle } from '../../src/auth/auth-throttle.ts';
import {
  addressSubject,
  clientAddress,
  rememberClientAddress,
  UNKNOWN_ADDRESS,
} from '../../src/http/client-address.ts';
import { MemoryStore } from '../../src/store/memory-store.ts';
import { RedisStore } from '../../src/store/redis-store.ts';
import { REDIS_URL } from '../helpers/services.ts';

const MINUTE = 60_000;

test('an address gets `limit` failures a minute; the next is refused until the window ends, then it may try again', async () => {
  let now = 1000 * MINUTE + 20_000; // 20 s into a minute
  const store = new MemoryStore(() => now);
  const throttle = new AuthFailureThrottle(store, 3, () => now);
  expect(throttle.retryAfter('203.0.113.7')).toBe(0);
  for (let i = 0; i < 3; i++) expect(await throttle.fail('203.0.113.7')).toBe(0);
  expect(throttle.retryAfter('203.0.113.7')).toBe(0);
  expect(await throttle.fail('203.0.113.7')).toBe(40);
  // Blocked without any store round trip: the answer comes from memory.
  expect(throttle.retryAfter('203.0.113.7')).toBe(40);
  now += 10_000;
  expect(throttle.retryAfter('203.0.113.7')).toBe(30);
  // Another address is untouched.
  expect(throttle.retryAfter('203.0.113.8')).toBe(0);
  expect(await throttle.fail('203.0.113.8')).toBe(0);
  // Once the window is over, the address may authenticate again.
  now += 30_000;
  expect(throttle.retryAfter('203.0.113.7')).toBe(0);
  expect(await throttle.fail('203.0.113.7')).toBe(0);
});

test('instances sharing a store share the count; each learns the block on its next failure', async () => {
  const now = 2000 * MINUTE + 1_000;
  const store = new MemoryStore(() => now);
  const a = new AuthFailureThrottle(store, 4, () => now);
  const b = new AuthFailureThrottle(store, 4, () => now);
  expect(await a.fail('198.51.100.1')).toBe(0);
  expect(await a.fail('198.51.100.1')).toBe(0);
  expect(await b.fail('198.51.100.1')).toBe(0);
  expect(await b.fail('198.51.100.1')).toBe(0);
  expect(await a.fail('198.51.100.1')).toBe(59);
  expect(a.retryAfter('198.51.100.1')).toBe(59);
  expect(b.retryAfter('198.51.100.1')).toBe(0);
  expect(await b.fail('198.51.100.1')).toBe(59);
  expect(b.retryAfter('198.51.100.1')).toBe(59);
});

test('IPv6 addresses count per /64; IPv4-mapped addresses as their IPv4 address', async () => {
  expect(addressSubject('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
  expect(addressSubject('2001:db8:1:2:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
  expect(addressSubject('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
  expect(addressSubject('::ffff:192.0.2.1')).toBe('192.0.2.1');
  expect(addressSubject('192.0.2.1')).toBe('192.0.2.1');
  const now = 3000 * MINUTE;
  const throttle = new AuthFailureThrottle(new MemoryStore(() => now), 1, () => now);
  expect(await throttle.fail('2001:db8:1:2::1')).toBe(0);
  expect(await throttle.fail('2001:db8:1:2::2')).toBeGreaterThan(0);
  expect(throttle.retryAfter('2001:db8:1:2:dead:beef::9')).toBeGreaterThan(0);
  expect(throttle.retryAfter('2001:db8:1:3::1')).toBe(0);
});

test('the client address is the peer; X-Forwarded-For counts only with TRUST_PROXY, and then only its last entry', () => {
  const forwarded = () => new Request('http://localhost/', { headers: { 'x-forwarded-for': '6.6.6.6, 203.0.113.9' } });
  const direct = forwarded();
  rememberClientAddress(direct, () => '192.0.2.1', false);
  expect(clientAddress(direct)).toBe('192.0.2.1');
  const proxied = forwarded();
  rememberClientAddress(proxied, () => '10.0.0.2', true);
  expect(clientAddress(proxied)).toBe('203.0.113.9');
  const noHeader = new Request('http://localhost/');
  rememberClientAddress(noHeader, () => '10.0.0.2', true);
  expect(clientAddress(noHeader)).toBe('10.0.0.2');
  expect(clientAddress(new Request('http://localhost/'))).toBe(UNKNOWN_ADDRESS);
  const unknownPeer = new Request('http://localhost/');
  rememberClientAddress(unknownPeer, () => undefined, false);
  expect(clientAddress(unknownPeer)).toBe(UNKNOWN_ADDRESS);
});

test('the peer address is looked up once, and only when asked for', () => {
  let lookups = 0;
  const request = new Request('http://localhost/');
  rememberClientAddress(
    request,
    () => {
      lookups++;
      return '198.51.100.7';
    },
    false,
  );
  expect(lookups).toBe(0);
  expect(clientAddress(request)).toBe('198.51.100.7');
  expect(clientAddress(request)).toBe('198.51.100.7');
  expect(lookups).toBe(1);
});

const redis = new RedisStore(REDIS_URL, `gw-unit-throttle-${crypto.randomUUID()}:`);
afterAll(() => redis.close());

test('on Redis, the window counter expires with its window', async () => {
  await redis.connect();
  const now = Date.now();
  const throttle = new AuthFailureThrottle(redis, 1, () => now);
  expect(await throttle.fail('192.0.2.50')).toBe(0);
  const minute = Math.floor(now / MINUTE);
  const ttl = await redis.ttl(`authfail:192.0.2.50:${minute}`);
  expect(ttl).toBeGreaterThan(0);
  expect(ttl).toBeLessThanOrEqual((minute + 1) * MINUTE - now + 5_000);
  expect(await throttle.fail('192.0.2.50')).toBeGreaterThan(0);
});

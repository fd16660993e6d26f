import { MIGRATIONS } from '../../src/db/migrations/index.ts';
import { afterAll, describe, expect, test } from 'bun:test';
import Redis from 'ioredis';
import { api, awayFromMinuteBoundary, createAccount, uniqueEmail } from '../helpers/api.ts';
import { startGateway, type GatewayProcess } from '../helpers/gateway-process.ts';
import { REDIS_URL, createTestDatabase, queryDatabase } from '../helpers/services.ts';

describe('two instances sharing Postgres and Redis', () => {
  const running: GatewayProcess[] = [];
  afterAll(async () => {
    await Promise.all(running.map((gw) => gw.stop()));
  });

  test('start at once on a fresh database: migrations apply exactly once; a key regenerated on one is refused by the other', async () => {
    const databaseUrl = await createTestDatabase('multi');
    const env = {
      DATABASE_URL: databaseUrl,
      REDIS_URL,
      REDIS_KEY_PREFIX: `${new URL(databaseUrl).pathname.slice(1)}:`,
    };
    const [a, b] = await Promise.all([startGateway(env), startGateway(env)]);
    running.push(a, b);
    const migrations = await queryDatabase<{ name: string }>(databaseUrl, 'select name from kysely_migration');
    expect(migrations.map((m) => m.name)).toEqual(Object.keys(MIGRATIONS));
    // Exactly one of the two printed the first account's key. It is printed just after the
    // instance starts answering, so /healthz can answer before the line is read: wait for it.
    for (let waited = 0; !a.firstKey() && !b.firstKey() && waited < 5_000; waited += 20) await Bun.sleep(20);
    expect([a.firstKey(), b.firstKey()].filter(Boolean)).toHaveLength(1);

    const acct = await createAccount(a, uniqueEmail('multi'));
    // Warm both instances' key caches.
    expect((await api(a, 'GET', '/v1/account', { key: acct.key })).status).toBe(200);
    expect((await api(b, 'GET', '/v1/account', { key: acct.key })).status).toBe(200);
    const regen = await api(a, 'POST', '/v1/account/api-key/regenerate', { key: acct.key });
    expect(regen.status).toBe(200);
    // The very next request on the other instance is refused.
    expect((await api(b, 'GET', '/v1/account', { key: acct.key })).status).toBe(401);
    expect((await api(b, 'GET', '/v1/account', { key: regen.body.data.api_key })).status).toBe(200);
  });

  test('the rate limit is shared: requests on two instances count against one budget', async () => {
    const databaseUrl = await createTestDatabase('multirl');
    const env = {
      DATABASE_URL: databaseUrl,
      REDIS_URL,
      REDIS_KEY_PREFIX: `${new URL(databaseUrl).pathname.slice(1)}:`,
      RATE_LIMIT_PER_MINUTE: '10',
    };
    const a = await startGateway(env);
    const b = await startGateway(env);
    running.push(a, b);
    const acct = await createAccount(a, uniqueEmail('multirl'));
    await awayFromMinuteBoundary();
    let ok = 0;
    for (let i = 0; i < 8; i++) if ((await api(a, 'GET', '/v1/account', { key: acct.key })).status === 200) ok++;
    await Bun.sleep(100); // let both instances sync their counts with Redis
    for (let i = 0; i < 8; i++) {
      if ((await api(b, 'GET', '/v1/account', { key: acct.key })).status === 200) ok++;
      await Bun.sleep(30);
    }
    expect(ok).toBe(10);
  });

  test('a small balance serves calls on either instance: one instance’s lease never takes all of it', async () => {
    const databaseUrl = await createTestDatabase('multilease');
    const env = {
      DATABASE_URL: databaseUrl,
      REDIS_URL,
      REDIS_KEY_PREFIX: `${new URL(databaseUrl).pathname.slice(1)}:`,
    };
    const a = await startGateway(env);
    const b = await startGateway(env);
    running.push(a, b);
    // $0.05, and calls whose worst case ($0.0164: 8,192 output tokens at $2/M) fits three times.
    const acct = await createAccount(a, uniqueEmail('multilease'), 0.05);
    const call = (gw: GatewayProcess) =>
      api(gw, 'POST', '/v1/chat/completions', {
        key: acct.key,
        body: { model: 'sandbox/echo', messages: [{ role: 'user', content: 'hi' }], max_tokens: 8192 },
      });
    // Alternating between the two, as one client's calls do across the workers of a host: the
    // first lease took the whole $0.05, and B answered 402 until A's lease sat idle.
    const statuses = [];
    for (const gw of [a, b, a, b, b, a]) statuses.push((await call(gw)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200]);
    const [row] = await queryDatabase<{ balance_usd: string; reserved_usd: string }>(
      databaseUrl,
      'select balance_usd, reserved_usd from accounts where id = $1',
      [acct.userId],
    );
    expect(Number(row?.balance_usd)).toBeLessThan(0.05);
    expect(Number(row?.reserved_usd)).toBeLessThanOrEqual(Number(row?.balance_usd));
  });

  test('a balance charged on one instance shows on the other at once; settlements travel as few coalesced messages', async () => {
    const databaseUrl = await createTestDatabase('multibal');
    const prefix = `${new URL(databaseUrl).pathname.slice(1)}:`;
    const env = { DATABASE_URL: databaseUrl, REDIS_URL, REDIS_KEY_PREFIX: prefix };
    const a = await startGateway(env);
    const b = await startGateway(env);
    running.push(a, b);
    const acct = await createAccount(a, uniqueEmail('multibal'), 10);
    const balanceOn = async (gw: GatewayProcess) =>
      (await api(gw, 'GET', '/v1/account', { key: acct.key })).body.data.balance_usd as number;
    expect(await balanceOn(b)).toBe(10); // cached on b from here on
    const listener = new Redis(REDIS_URL);
    const messages: string[] = [];
    listener.on('message', (_channel: string, message: string) => messages.push(message));
    await listener.subscribe(`${prefix}account:changed`);
    try {
      const calls = 12;
      for (let i = 0; i < calls; i++) {
        const res = await api(a, 'POST', '/v1/chat/completions', {
          key: acct.key,
          body: { model: 'sandbox/echo', messages: [{ role: 'user', content: `hello number ${i}` }] },
        });
        expect(res.status).toBe(200);
      }
      // Each call above was settled alone (one at a time): one batch each.
      const charged = await balanceOn(a);
      expect(charged).toBeLessThan(10);
      const deadline = Date.now() + 2000;
      let seen = await balanceOn(b);
      while (seen !== charged && Date.now() < deadline) {
        await Bun.sleep(10);
        seen = await balanceOn(b);
      }
      expect(seen).toBe(charged);
      await Bun.sleep(100); // the last window's message
      expect(messages.length).toBeGreaterThan(0);
      expect(messages.length).toBeLessThan(calls);
      for (const m of messages) expect(m.split(',')).toContain(String(acct.userId));
    } finally {
      await listener.quit();
    }
  });
});

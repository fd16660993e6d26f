import { MIGRATIONS } from '../../src/db/migrations/index.ts';
import { afterAll, describe, expect, test } from 'bun:test';
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
    // Exactly one of the two printed the first account's key.
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
});

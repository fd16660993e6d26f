import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import OpenAI from 'openai';
import { api, awayFromMinuteBoundary, createAccount, uniqueEmail } from '../helpers/api.ts';
import { startGateway, type GatewayProcess } from '../helpers/gateway-process.ts';
import { REDIS_URL, createTestDatabase, queryDatabase } from '../helpers/services.ts';

/**
 * API keys on two instances sharing Postgres and Redis (docs/keys.md): a key's rpm and tpm are
 * one budget across instances, and a revocation or an edit made on one instance applies to the
 * very next request on the other.
 */
describe('API keys across two instances', () => {
  let a: GatewayProcess;
  let b: GatewayProcess;
  let databaseUrl: string;
  beforeAll(async () => {
    databaseUrl = await createTestDatabase('keysmulti');
    const env = {
      DATABASE_URL: databaseUrl,
      REDIS_URL,
      REDIS_KEY_PREFIX: `${new URL(databaseUrl).pathname.slice(1)}:`,
      RATE_LIMIT_PER_MINUTE: '100000',
    };
    [a, b] = await Promise.all([startGateway(env), startGateway(env)]);
  }, 30_000);
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  const newKey = async (owner: string, body: unknown) => {
    const res = await api(a, 'POST', '/v1/keys', { key: owner, body });
    expect(res.status).toBe(200);
    return res.body.data as { id: number; key: string };
  };

  test('rpm: requests spread over both instances count against one limit; 429 with retry-after', async () => {
    const acct = await createAccount(a, uniqueEmail('keys-rpm'));
    const k = await newKey(acct.key, { name: 'rpm', rpm: 7 });
    await awayFromMinuteBoundary();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => api(i % 2 ? a : b, 'GET', '/v1/account', { key: k.key })),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(7);
    const refused = results.filter((r) => r.status === 429);
    expect(refused).toHaveLength(13);
    const retryAfter = Number(refused[0]?.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
  });

  test('rpm of 64 and more: each instance admits from a lease; never above the limit, at most a chunk (limit/64) per instance below', async () => {
    const acct = await createAccount(a, uniqueEmail('keys-rpm-lease'));
    const rpm = 256;
    const k = await newKey(acct.key, { name: 'rpm-lease', rpm });
    await awayFromMinuteBoundary(30);
    const statuses: number[] = [];
    for (let wave = 0; wave < 10; wave++) {
      const results = await Promise.all(
        Array.from({ length: 40 }, (_, i) => api(i % 2 ? a : b, 'GET', '/v1/account', { key: k.key })),
      );
      statuses.push(...results.map((r) => r.status));
    }
    const admitted = statuses.filter((s) => s === 200).length;
    expect(statuses.every((s) => s === 200 || s === 429)).toBe(true);
    expect(admitted).toBeLessThanOrEqual(rpm);
    expect(admitted).toBeGreaterThanOrEqual(rpm - 2 * (rpm / 64));
  });

  test('tpm: estimated at admission, corrected at settlement, shared by both instances; RateLimitError', async () => {
    const acct = await createAccount(a, uniqueEmail('keys-tpm'));
    const tpm = 60;
    const k = await newKey(acct.key, { name: 'tpm', tpm });
    await awayFromMinuteBoundary();
    const clients = [a, b].map((gw) => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: k.key, maxRetries: 0 }));
    const content = 'hello there'; // 11 characters: estimated at 3 tokens
    const maxTokens = 20;
    const estimate = Math.ceil(content.length / 4) + maxTokens;
    let counted = 0;
    let admitted = 0;
    let refusal: unknown;
    for (let i = 0; i < 12 && !refusal; i++) {
      try {
        const res = await clients[i % 2]?.chat.completions.create({
          model: 'sandbox/echo',
          max_tokens: maxTokens,
          messages: [{ role: 'user', content }],
        });
        // The call fit: what was counted before it, plus its estimate, was within the limit.
        expect(counted + estimate).toBeLessThanOrEqual(tpm);
        counted += (res?.usage?.prompt_tokens ?? 0) + (res?.usage?.completion_tokens ?? 0);
        admitted++;
        await Bun.sleep(50); // the correction lands just after the answer
      } catch (err) {
        refusal = err;
      }
    }
    expect(admitted).toBeGreaterThan(1);
    expect(refusal).toBeInstanceOf(OpenAI.RateLimitError);
    // Refused exactly when the corrected count left no room for the estimate.
    expect(counted + estimate).toBeGreaterThan(tpm);
    const headers = (refusal as InstanceType<typeof OpenAI.RateLimitError>).headers as Headers;
    expect(Number(headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  test('a budget is one across instances: 4K creates spread over both for K tasks → exactly K; LLM streams stay within it', async () => {
    const acct = await createAccount(a, uniqueEmail('keys-budget2'), 100);
    const K = 10;
    const tasks = await newKey(acct.key, { name: 'tasks', budget_usd: K * 0.01, budget_period: 'week' });
    const created = await Promise.all(
      Array.from({ length: 4 * K }, (_, i) =>
        api(i % 2 ? a : b, 'POST', '/v1/tasks', {
          key: tasks.key,
          body: { model: 'sandbox/image', input: { prompt: 'fox', delay_ms: 60000 } },
        }),
      ),
    );
    expect(created.filter((r) => r.status === 200)).toHaveLength(K);
    expect(created.filter((r) => r.status === 402)).toHaveLength(3 * K);

    const budget = 0.05;
    const llm = await newKey(acct.key, { name: 'llm', budget_usd: budget });
    const words = Array.from({ length: 3000 }, (_, i) => `w${i % 10}`).join(' ');
    const outcomes = await Promise.all(
      Array.from({ length: 30 }, async (_, i) => {
        const client = new OpenAI({ baseURL: `${(i % 2 ? a : b).url}/v1`, apiKey: llm.key, maxRetries: 0 });
        try {
          const stream = await client.chat.completions.create({
            model: 'sandbox/echo',
            max_tokens: 4000,
            stream: true,
            messages: [{ role: 'user', content: words }],
          });
          for await (const _ of stream) {
            // drain
          }
          return 200;
        } catch (err) {
          if (err instanceof OpenAI.APIError) return err.status;
          throw err;
        }
      }),
    );
    expect(outcomes).toContain(200);
    expect(outcomes).toContain(402);
    expect(outcomes.every((s) => s === 200 || s === 402)).toBe(true);
    const listed = await api(b, 'GET', '/v1/keys', { key: acct.key });
    const spend = listed.body.data.find((k: { id: number }) => k.id === llm.id).spend_usd as number;
    expect(Math.round(spend * 1e10)).toBeLessThanOrEqual(Math.round(budget * 1e10));
    const records = await api(a, 'GET', `/v1/tasks?key_id=${llm.id}&page_size=100`, { key: acct.key });
    const total = (records.body.data as Array<{ cost: number }>).reduce((n, t) => n + Math.round(t.cost * 1e10), 0);
    expect(Math.round(spend * 1e10)).toBe(total);
  });

  test('a budget edit applies to the next LLM call on both instances; idle budget leases go back to the key', async () => {
    const acct = await createAccount(a, uniqueEmail('keys-lease'), 100);
    const k = await newKey(acct.key, { name: 'leased', budget_usd: 1 });
    const call = (gw: GatewayProcess) =>
      new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: k.key, maxRetries: 0 }).chat.completions
        .create({ model: 'sandbox/echo', max_tokens: 50, messages: [{ role: 'user', content: 'hello' }] })
        .then(
          () => 200,
          (err: unknown) => (err instanceof OpenAI.APIError ? err.status : Promise.reject(err)),
        );
    // Both instances now hold a lease on the key's budget, with room for more calls than one.
    expect(await call(a)).toBe(200);
    expect(await call(b)).toBe(200);
    const spent = async () =>
      Number(
        (
          await queryDatabase<{ s: string }>(databaseUrl, 'select spend_usd as s from api_keys where id = $1', [k.id])
        )[0]?.s,
      );
    // The budget shrinks to what is spent: neither instance's lease may admit another call.
    const patched = await api(a, 'PATCH', `/v1/keys/${k.id}`, { key: acct.key, body: { budget_usd: await spent() } });
    expect(patched.status).toBe(200);
    expect(await call(b)).toBe(402);
    expect(await call(a)).toBe(402);
    // Room again: both admit.
    expect((await api(b, 'PATCH', `/v1/keys/${k.id}`, { key: acct.key, body: { budget_usd: 1 } })).status).toBe(200);
    expect(await call(a)).toBe(200);
    expect(await call(b)).toBe(200);
    // Leases with no call go back to the key within a second or so.
    const deadline = Date.now() + 5_000;
    let held = '';
    while (Date.now() < deadline) {
      held = (
        await queryDatabase<{ r: string }>(databaseUrl, 'select reserved_usd::text as r from api_keys where id = $1', [
          k.id,
        ])
      )[0]?.r as string;
      if (Number(held) === 0) break;
      await Bun.sleep(100);
    }
    expect(Number(held)).toBe(0);
    const rows = await queryDatabase(databaseUrl, 'select 1 from key_holds where key_id = $1', [k.id]);
    expect(rows).toHaveLength(0);
  });

  test('a periodic budget starts afresh when its period rolls over', async () => {
    const acct = await createAccount(a, uniqueEmail('keys-period'), 10);
    const k = await newKey(acct.key, { name: 'monthly', budget_usd: 0.01, budget_period: 'month' });
    const image = { model: 'sandbox/image', input: { prompt: 'fox', delay_ms: 60000 } };
    expect((await api(a, 'POST', '/v1/tasks', { key: k.key, body: image })).status).toBe(200);
    expect((await api(b, 'POST', '/v1/tasks', { key: k.key, body: image })).status).toBe(402);
    // As if the spend had been counted last month.
    await queryDatabase(
      databaseUrl,
      "update api_keys set period_start = period_start - interval '1 month' where id = $1",
      [k.id],
    );
    const listed = (await api(b, 'GET', '/v1/keys', { key: acct.key })).body.data.find(
      (x: { id: number }) => x.id === k.id,
    );
    const now = new Date();
    expect(listed).toMatchObject({
      spend_usd: 0,
      period_start: Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1) / 1000,
    });
    expect((await api(b, 'POST', '/v1/tasks', { key: k.key, body: image })).status).toBe(200);
    expect((await api(a, 'POST', '/v1/tasks', { key: k.key, body: image })).status).toBe(402);
    const [row] = await queryDatabase<{ spend_usd: string }>(
      databaseUrl,
      'select spend_usd from api_keys where id = $1',
      [k.id],
    );
    expect(Number(row?.spend_usd)).toBe(0.01);
  });

  test('a revoked key is refused on both instances at once; an edit applies on both at once', async () => {
    const acct = await createAccount(a, uniqueEmail('keys-revoke'));
    const k = await newKey(acct.key, { name: 'temp' });
    // Warm both instances' caches.
    for (const gw of [a, b]) expect((await api(gw, 'GET', '/v1/account', { key: k.key })).status).toBe(200);
    const image = { model: 'sandbox/image', input: { prompt: 'fox', delay_ms: 0 }, dry_run: true };
    expect((await api(b, 'POST', '/v1/tasks', { key: k.key, body: image })).status).toBe(200);
    const patched = await api(a, 'PATCH', `/v1/keys/${k.id}`, { key: acct.key, body: { models: ['sandbox/echo'] } });
    expect(patched.status).toBe(200);
    expect((await api(b, 'POST', '/v1/tasks', { key: k.key, body: image })).status).toBe(403);
    const revoked = await api(b, 'DELETE', `/v1/keys/${k.id}`, { key: acct.key });
    expect(revoked.status).toBe(200);
    const [onA, onB] = await Promise.all([
      api(a, 'GET', '/v1/account', { key: k.key }),
      api(b, 'GET', '/v1/account', { key: k.key }),
    ]);
    expect([onA.status, onB.status]).toEqual([401, 401]);
    // The account's other key is untouched.
    expect((await api(a, 'GET', '/v1/account', { key: acct.key })).status).toBe(200);
  });
});

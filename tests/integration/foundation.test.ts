import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { ADMIN_TOKEN, MODES, startGateway, type GatewayProcess } from '../helpers/gateway-process.ts';
import { api, createAccount, uniqueEmail } from '../helpers/api.ts';

for (const mode of MODES) {
  describe(`foundation [${mode.name}]`, () => {
    let gw: GatewayProcess;
    let key: string;
    let userId: number;

    beforeAll(async () => {
      gw = await startGateway(await mode.env('foundation'));
      ({ key, userId } = await createAccount(gw, uniqueEmail('found'), 12.5));
    });
    afterAll(async () => {
      await gw?.stop();
    });

    test('first start creates an account and prints its key once', async () => {
      const first = gw.firstKey();
      expect(first).toMatch(/^gw_[A-Za-z0-9]{48}$/);
      const res = await api(gw, 'GET', '/v1/account', { key: first });
      expect(res.status).toBe(200);
      expect(res.body.data.email).toBe('owner@localhost');
      expect(res.body.data.balance_usd).toBe(10);
    });

    test('healthz, readyz and the OpenAPI document', async () => {
      expect((await api(gw, 'GET', '/healthz')).body).toEqual({ status: 'ok' });
      const ready = await api(gw, 'GET', '/readyz');
      expect(ready.status).toBe(200);
      expect(ready.body.checks.database.ok).toBe(true);
      expect(ready.body.checks.database.kind).toBe(mode.name === 'embedded' ? 'pglite' : 'postgres');
      expect(ready.body.checks.store.kind).toBe(mode.name === 'embedded' ? 'memory' : 'redis');
      const doc = await api(gw, 'GET', '/openapi.json');
      expect(doc.body.openapi).toBe('3.1.0');
      expect(Object.keys(doc.body.paths)).toContain('/v1/models/{model_id}');
    });

    test('missing, malformed and unknown keys get the 401 envelope', async () => {
      const expected = { success: false, code: 401, data: { message: 'invalid or missing API key' } };
      expect((await api(gw, 'GET', '/v1/account')).body).toEqual(expected);
      const wrong = await api(gw, 'GET', '/v1/account', { key: `gw_${'x'.repeat(48)}` });
      expect(wrong.status).toBe(401);
      expect(wrong.body).toEqual(expected);
      const basic = await api(gw, 'GET', '/v1/models', { headers: { authorization: `Basic ${key}` } });
      expect(basic.status).toBe(401);
    });

    test('GET /v1/models lists the sandbox catalog grouped by category then display name', async () => {
      const res = await api(gw, 'GET', '/v1/models', { key });
      expect(res.status).toBe(200);
      expect(res.body.object).toBe('list');
      const ids = res.body.data.map((m: { id: string }) => m.id);
      expect(ids).toEqual(['sandbox/speech', 'sandbox/image', 'sandbox/video', 'sandbox/echo', 'sandbox/embed']);
      const echo = res.body.data[3];
      expect(echo).toMatchObject({
        id: 'sandbox/echo',
        object: 'model',
        created: 1735689600,
        owned_by: 'sandbox',
        provider_display: 'Sandbox',
        display_name: 'Echo',
        category: 'llm',
        context_length: 32768,
        max_output: 8192,
      });
      expect(echo.added).toBeGreaterThan(1_700_000_000);
      const image = res.body.data[1];
      expect(image.context_length).toBeUndefined();
      expect(image.max_output).toBeUndefined();
    });

    test('category filter is a case-insensitive comma list; a bad value is 400 invalid_category', async () => {
      const res = await api(gw, 'GET', '/v1/models?category=LLM,%20Image', { key });
      expect(res.body.data.map((m: { id: string }) => m.id)).toEqual(['sandbox/image', 'sandbox/echo']);
      const bad = await api(gw, 'GET', '/v1/models?category=llm,music', { key });
      expect(bad.status).toBe(400);
      expect(bad.body.error.code).toBe('invalid_category');
      expect(bad.body.error.type).toBe('invalid_request_error');
      expect(bad.body.error.message).toContain('music');
    });

    test('GET /v1/models/{id}: exact id, provider slug, or 404 model_not_found', async () => {
      const one = await api(gw, 'GET', '/v1/models/sandbox/video', { key });
      expect(one.status).toBe(200);
      expect(one.body.id).toBe('sandbox/video');
      expect(one.body.category).toBe('video');
      const provider = await api(gw, 'GET', '/v1/models/sandbox', { key });
      expect(provider.body.object).toBe('list');
      expect(provider.body.data).toHaveLength(5);
      const missing = await api(gw, 'GET', '/v1/models/sandbox/nope', { key });
      expect(missing.status).toBe(404);
      expect(missing.body.error).toMatchObject({ type: 'invalid_request_error', code: 'model_not_found' });
    });

    test('account and its legacy alias', async () => {
      const res = await api(gw, 'GET', '/v1/account', { key });
      expect(res.status).toBe(200);
      expect(res.body.success).toBe(true);
      expect(res.body.code).toBe(200);
      expect(res.body.data.user_id).toBe(userId);
      expect(res.body.data.balance_usd).toBe(12.5);
      expect(typeof res.body.data.created_at).toBe('number');
      expect(res.body.data.updated_at).toBeGreaterThanOrEqual(res.body.data.created_at);
      const legacy = await api(gw, 'GET', '/account', { key });
      expect(legacy.body).toEqual(res.body);
    });

    test('admin API: create, top up, show, and its errors', async () => {
      const email = uniqueEmail('admin');
      const created = await api(gw, 'POST', '/admin/accounts', { key: ADMIN_TOKEN, body: { email } });
      expect(created.status).toBe(200);
      expect(created.body.data.email).toBe(email);
      const id = created.body.data.user_id;
      const topped = await api(gw, 'POST', `/admin/accounts/${id}/topup`, {
        key: ADMIN_TOKEN,
        body: { amount_usd: 7.25 },
      });
      expect(topped.body.data.balance_usd).toBe(7.25);
      // The account cache was invalidated: the user's own view agrees at once.
      const own = await api(gw, 'GET', '/v1/account', { key: created.body.data.api_key });
      expect(own.body.data.balance_usd).toBe(7.25);
      expect((await api(gw, 'GET', `/admin/accounts/${id}`, { key: ADMIN_TOKEN })).body.data.balance_usd).toBe(7.25);

      expect((await api(gw, 'POST', '/admin/accounts', { body: { email: uniqueEmail() } })).status).toBe(401);
      expect((await api(gw, 'POST', '/admin/accounts', { key: key, body: { email: uniqueEmail() } })).status).toBe(401);
      const dup = await api(gw, 'POST', '/admin/accounts', { key: ADMIN_TOKEN, body: { email } });
      expect(dup.status).toBe(409);
      const badEmail = await api(gw, 'POST', '/admin/accounts', { key: ADMIN_TOKEN, body: { email: 'nope' } });
      expect(badEmail.status).toBe(422);
      expect(badEmail.body.data.message).toContain('email');
      // An address too long for the unique index is refused, not a 500.
      const longEmail = `${'x'.repeat(2800)}@example.com`;
      const tooLong = await api(gw, 'POST', '/admin/accounts', { key: ADMIN_TOKEN, body: { email: longEmail } });
      expect(tooLong.status).toBe(422);
      expect(tooLong.body.data.message).toBe('email: must be at most 254 characters');
      const badAmount = await api(gw, 'POST', `/admin/accounts/${id}/topup`, {
        key: ADMIN_TOKEN,
        body: { amount_usd: '5' },
      });
      expect(badAmount.status).toBe(422);
      expect(badAmount.body.data.message).toStartWith('amount_usd:');
      expect((await api(gw, 'GET', '/admin/accounts/999999', { key: ADMIN_TOKEN })).status).toBe(404);
    });

    test('a top-up with an Idempotency-Key credits once: retried, sent ten times at once, per account', async () => {
      const acct = await createAccount(gw, uniqueEmail('topup-once'), 1);
      const other = await createAccount(gw, uniqueEmail('topup-other'), 1);
      const topUp = (userId: number, amount: number, key?: string) =>
        api(gw, 'POST', `/admin/accounts/${userId}/topup`, {
          key: ADMIN_TOKEN,
          body: { amount_usd: amount },
          headers: key === undefined ? {} : { 'idempotency-key': key },
        });
      const first = await topUp(acct.userId, 2.5, 'payment-1');
      expect(first.status).toBe(200);
      expect(first.body.data.balance_usd).toBe(3.5);
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      // A retry (the answer was lost on the way) is answered with the account as it is, not credited.
      const retried = await topUp(acct.userId, 2.5, 'payment-1');
      expect(retried.status).toBe(200);
      expect(retried.body.data.balance_usd).toBe(3.5);
      expect(retried.headers.get('idempotent-replayed')).toBe('true');
      // Ten tries of one top-up at once: one credit.
      const burst = await Promise.all(Array.from({ length: 10 }, () => topUp(acct.userId, 1, 'payment-2')));
      expect(burst.map((r) => r.status)).toEqual(Array(10).fill(200));
      expect(burst.filter((r) => r.headers.get('idempotent-replayed') === null)).toHaveLength(1);
      // The same key for another amount is refused, and moves nothing.
      const changed = await topUp(acct.userId, 9, 'payment-1');
      expect(changed.status).toBe(422);
      expect(changed.body.data.message).toStartWith('Idempotency-Key:');
      // Keys are the account's own: another account's payment-1 is its own top-up.
      expect((await topUp(other.userId, 2.5, 'payment-1')).body.data.balance_usd).toBe(3.5);
      // Without a key, each request is a top-up of its own, as before.
      await topUp(acct.userId, 0.25);
      expect((await topUp(acct.userId, 0.25)).body.data.balance_usd).toBe(5);
      const bad = await topUp(acct.userId, 1, 'has space');
      expect(bad.status).toBe(422);
      expect(bad.body.data.message).toStartWith('Idempotency-Key:');
      const shown = await api(gw, 'GET', `/admin/accounts/${acct.userId}`, { key: ADMIN_TOKEN });
      expect(shown.body.data.balance_usd).toBe(5);
      expect((await api(gw, 'GET', '/v1/account', { key: acct.key })).body.data.balance_usd).toBe(5);
    });

    test('regenerating the key: the old one is refused at once, the new one works', async () => {
      const acct = await createAccount(gw, uniqueEmail('regen'));
      expect((await api(gw, 'GET', '/v1/account', { key: acct.key })).status).toBe(200);
      const regen = await api(gw, 'POST', '/v1/account/api-key/regenerate', { key: acct.key });
      expect(regen.status).toBe(200);
      const fresh = regen.body.data.api_key;
      expect(fresh).not.toBe(acct.key);
      expect((await api(gw, 'GET', '/v1/account', { key: acct.key })).status).toBe(401);
      const me = await api(gw, 'GET', '/v1/account', { key: fresh });
      expect(me.body.data.user_id).toBe(acct.userId);
    });

    test('webhook signing: enable creates a 64-hex secret, disable keeps it, reset replaces it', async () => {
      const acct = await createAccount(gw, uniqueEmail('sign'));
      const initial = await api(gw, 'GET', '/v1/account/webhook-signing', { key: acct.key });
      expect(initial.body.data.enabled).toBe(false);
      expect(initial.body.data.secret ?? null).toBeNull();
      const on = await api(gw, 'POST', '/v1/account/webhook-signing', { key: acct.key, body: { enabled: true } });
      expect(on.body.data.enabled).toBe(true);
      expect(on.body.data.secret).toMatch(/^[0-9a-f]{64}$/);
      const off = await api(gw, 'POST', '/v1/account/webhook-signing', { key: acct.key, body: { enabled: false } });
      expect(off.body.data).toEqual({
        enabled: false,
        secret: on.body.data.secret,
        standard_secret: `whsec_${Buffer.from(on.body.data.secret, 'hex').toString('base64')}`,
      });
      const again = await api(gw, 'POST', '/v1/account/webhook-signing', { key: acct.key, body: { enabled: true } });
      expect(again.body.data.secret).toBe(on.body.data.secret);
      const reset = await api(gw, 'POST', '/v1/account/webhook-signing/reset', { key: acct.key });
      expect(reset.body.data.enabled).toBe(true);
      expect(reset.body.data.secret).toMatch(/^[0-9a-f]{64}$/);
      expect(reset.body.data.secret).not.toBe(on.body.data.secret);
    });

    test('malformed JSON and invalid bodies are 422 envelopes naming the field; unknown routes 404', async () => {
      const bad = await api(gw, 'POST', '/v1/account/webhook-signing', { key, rawBody: '{"enabled": tru' });
      expect(bad.status).toBe(422);
      expect(bad.body).toEqual({ success: false, code: 422, data: { message: 'request body is not valid JSON' } });
      const wrong = await api(gw, 'POST', '/v1/account/webhook-signing', { key, body: { enabled: 'yes' } });
      expect(wrong.status).toBe(422);
      expect(wrong.body.data.message).toBe('enabled: expected boolean, received "yes"');
      const missing = await api(gw, 'POST', '/v1/account/webhook-signing', { key, body: {} });
      expect(missing.body.data.message).toBe('enabled: is required');
      const route = await api(gw, 'GET', '/v1/nothing-here', { key });
      expect(route.status).toBe(404);
      expect(route.body.success).toBe(false);
      expect(route.body.code).toBe(404);
    });

    test('one JSON log line per request with the account id and never the key', async () => {
      await api(gw, 'GET', '/v1/account', { key });
      await Bun.sleep(50);
      const lines = gw
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l))
        .filter((l) => l.msg === 'request' && l.path === '/v1/account' && l.account_id === userId);
      expect(lines.length).toBeGreaterThan(0);
      expect(lines[0]).toMatchObject({ method: 'GET', status: 200 });
      expect(typeof lines[0].duration_ms).toBe('number');
      expect(gw.output()).not.toContain(key);
    });
  });
}

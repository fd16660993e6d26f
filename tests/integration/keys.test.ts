import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { api, createAccount, uniqueEmail } from '../helpers/api.ts';
import { ADMIN_TOKEN, MODES, startGateway, type GatewayProcess } from '../helpers/gateway-process.ts';
import { runCommand } from '../helpers/run-command.ts';

/**
 * Named API keys (docs/keys.md): the self-service and admin endpoints, the model allow-list in
 * each endpoint's own error shape, expiry, budgets on tasks and on LLM calls (parallel creates and
 * streams never take a key past its budget), `key_id` on records and `x-gateway-cost-usd`.
 */

const createKey = async (gw: GatewayProcess, key: string, body: unknown) => {
  const res = await api(gw, 'POST', '/v1/keys', { key, body });
  expect(res.status).toBe(200);
  return res.body.data as { id: number; key: string; key_prefix: string; name: string };
};
const listKeys = async (gw: GatewayProcess, key: string) => {
  const res = await api(gw, 'GET', '/v1/keys', { key });
  expect(res.status).toBe(200);
  return res.body.data as Array<Record<string, unknown> & { id: number }>;
};
const units = (usd: number) => Math.round(usd * 1e10);

for (const mode of MODES) {
  describe(`API keys [${mode.name}]`, () => {
    let gw: GatewayProcess;
    beforeAll(async () => {
      gw = await startGateway({ ...(await mode.env('keys')), RATE_LIMIT_PER_MINUTE: '100000' });
    }, 30_000);
    afterAll(async () => {
      await gw?.stop();
    });

    test('create shows the key once; list, patch, revoke; the first key is `default`; bad input names the field', async () => {
      const acct = await createAccount(gw, uniqueEmail('keys'));
      const [first] = await listKeys(gw, acct.key);
      expect(first?.name).toBe('default');
      expect(first?.key_prefix).toBe(acct.key.slice(0, 9));
      const made = await createKey(gw, acct.key, { name: 'ci', budget_usd: 5, budget_period: 'month', rpm: 100 });
      expect(made.key.startsWith(made.key_prefix)).toBe(true);
      const listed = await listKeys(gw, acct.key);
      expect(listed.map((k) => k.name)).toEqual(['default', 'ci']);
      expect(JSON.stringify(listed)).not.toContain(made.key);
      const ci = listed[1] as Record<string, unknown>;
      expect(ci).toMatchObject({ budget_usd: 5, budget_period: 'month', rpm: 100, tpm: null, spend_usd: 0 });
      const now = new Date();
      expect(ci.period_start).toBe(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1) / 1000);
      expect(ci.last_used_at).toBeNull();
      // The new key works (its use is recorded within seconds), then is changed, then revoked.
      expect((await api(gw, 'GET', '/v1/account', { key: made.key })).status).toBe(200);
      const usedAt = Math.floor(Date.now() / 1000);
      let lastUsed: unknown = null;
      for (let i = 0; i < 50 && lastUsed === null; i++) {
        await Bun.sleep(100);
        lastUsed = (await listKeys(gw, acct.key)).find((x) => x.id === made.id)?.last_used_at ?? null;
      }
      expect(Math.abs((lastUsed as number) - usedAt)).toBeLessThanOrEqual(1);
      const patched = await api(gw, 'PATCH', `/v1/keys/${made.id}`, {
        key: acct.key,
        body: { models: ['sandbox/*'], rpm: null },
      });
      expect(patched.status).toBe(200);
      expect(patched.body.data).toMatchObject({ models: ['sandbox/*'], rpm: null, name: 'ci' });
      const bad = [
        [{ name: '' }, 'name'],
        [{ name: 'x', budget_usd: -1 }, 'budget_usd'],
        [{ name: 'x', budget_period: 'year' }, 'budget_period'],
        [{ name: 'x', models: ['bad model'] }, 'models[0]'],
        [{ name: 'x', rpm: 1.5 }, 'rpm'],
        [{ name: 'x', expires_at: 1 }, 'expires_at'],
        [{ name: 'x', colour: 'red' }, 'colour'],
      ] as const;
      for (const [body, field] of bad) {
        const res = await api(gw, 'POST', '/v1/keys', { key: acct.key, body });
        expect(res.status).toBe(422);
        expect(res.body.data.message).toContain(field);
      }
      // Another account's key: 404, on every verb.
      const other = await createAccount(gw, uniqueEmail('keys-other'));
      expect((await api(gw, 'PATCH', `/v1/keys/${made.id}`, { key: other.key, body: { rpm: 1 } })).status).toBe(404);
      expect((await api(gw, 'DELETE', `/v1/keys/${made.id}`, { key: other.key })).status).toBe(404);
      expect((await api(gw, 'DELETE', '/v1/keys/99999999999', { key: other.key })).status).toBe(404);
      const revoked = await api(gw, 'DELETE', `/v1/keys/${made.id}`, { key: acct.key });
      expect(revoked.status).toBe(200);
      expect((await api(gw, 'GET', '/v1/account', { key: made.key })).status).toBe(401);
      expect((await listKeys(gw, acct.key)).map((k) => k.name)).toEqual(['default']);
      // Regenerating rotates the default key in place: same id and settings, new secret.
      await api(gw, 'PATCH', `/v1/keys/${first?.id}`, { key: acct.key, body: { rpm: 1000 } });
      const regen = await api(gw, 'POST', '/v1/account/api-key/regenerate', { key: acct.key });
      expect(regen.status).toBe(200);
      const fresh = regen.body.data.api_key as string;
      expect((await api(gw, 'GET', '/v1/account', { key: acct.key })).status).toBe(401);
      const after = await listKeys(gw, fresh);
      expect(after).toHaveLength(1);
      expect(after[0]).toMatchObject({ id: first?.id, name: 'default', rpm: 1000, key_prefix: fresh.slice(0, 9) });
    });

    test('a key with a model list, a budget or an expiry cannot manage keys, rotate the account key or read the webhook secret', async () => {
      const acct = await createAccount(gw, uniqueEmail('limited'));
      // Rates shape a key's traffic, not what it may do: a key with rpm and tpm manages as any.
      const open = await createKey(gw, acct.key, { name: 'open', rpm: 1000, tpm: 100000 });
      const limits = [
        { models: ['sandbox/echo'] },
        { budget_usd: 0.01 },
        { expires_at: Math.floor(Date.now() / 1000) + 3600 },
      ] as const;
      for (const [i, settings] of limits.entries()) {
        const limited = await createKey(gw, acct.key, { name: `limited-${i}`, ...settings });
        // It works, and may read the account and its keys (no secret among them) ...
        expect((await api(gw, 'GET', '/v1/account', { key: limited.key })).status).toBe(200);
        expect((await api(gw, 'GET', '/v1/keys', { key: limited.key })).status).toBe(200);
        expect((await api(gw, 'GET', `/v1/keys/${limited.id}`, { key: limited.key })).status).toBe(200);
        // ... and nothing that reaches past its limits: every one of these was a 200.
        const refused = [
          ['POST', '/v1/keys', { name: 'wide open' }],
          ['PATCH', `/v1/keys/${limited.id}`, { budget_usd: null, models: null, rpm: null, tpm: null }],
          ['DELETE', `/v1/keys/${open.id}`, undefined],
          ['POST', '/v1/account/api-key/regenerate', undefined],
          ['GET', '/v1/account/webhook-signing', undefined],
          ['POST', '/v1/account/webhook-signing', { enabled: true }],
          ['POST', '/v1/account/webhook-signing/reset', undefined],
        ] as const;
        for (const [method, path, body] of refused) {
          const res = await api(gw, method, path, { key: limited.key, body });
          expect(`${method} ${path} ${res.status}`).toBe(`${method} ${path} 403`);
          expect(res.body.data.message).toStartWith('key_limited:');
        }
        // The dashboard signed in with it is held to the same.
        const session = await api(gw, 'POST', '/dashboard/api/session', { body: { api_key: limited.key } });
        expect(session.status).toBe(200);
        const headers = {
          cookie: (session.headers.get('set-cookie') ?? '').split(';')[0] as string,
          'x-csrf-token': session.body.data.csrf_token as string,
        };
        expect((await api(gw, 'POST', '/v1/keys', { headers, body: { name: 'via page' } })).status).toBe(403);
        expect((await api(gw, 'GET', '/v1/account/webhook-signing', { headers })).status).toBe(403);
      }
      // Nothing changed: the account's key still works, the open key too, and no key was made.
      expect((await api(gw, 'GET', '/v1/account', { key: acct.key })).status).toBe(200);
      expect((await listKeys(gw, open.key)).map((k) => k.name)).toEqual([
        'default',
        'open',
        'limited-0',
        'limited-1',
        'limited-2',
      ]);
      // A key without limits manages as before.
      expect((await api(gw, 'GET', '/v1/account/webhook-signing', { key: open.key })).status).toBe(200);
      const third = await createKey(gw, open.key, { name: 'made by open' });
      // ... and may limit another key, but not itself: it would lose the right to undo it.
      const own = await api(gw, 'PATCH', `/v1/keys/${open.id}`, { key: open.key, body: { budget_usd: 5 } });
      expect(own.status).toBe(409);
      expect(own.body.data.message).toContain('cannot give itself');
      const other = await api(gw, 'PATCH', `/v1/keys/${third.id}`, { key: open.key, body: { budget_usd: 5 } });
      expect(other.status).toBe(200);
      expect((await api(gw, 'PATCH', `/v1/keys/${open.id}`, { key: open.key, body: { rpm: 50 } })).status).toBe(200);
      expect((await api(gw, 'DELETE', `/v1/keys/${third.id}`, { key: open.key })).status).toBe(200);
    });

    test('hostile input on the key endpoints is a 4xx, never a 5xx', async () => {
      const acct = await createAccount(gw, uniqueEmail('keys-hostile'));
      const raw = [
        '{"name":"a\\u0000b"}',
        '{"name":"\\ud800"}',
        '{"name":"x","budget_usd":1e400}',
        '{"name":"x","rpm":99999999999999999999999}',
        '{"name":"x","models":["\\ud800/x"]}',
        `{"name":${'['.repeat(5000)}${']'.repeat(5000)}}`,
        '{"name":"x",',
        '[]',
      ];
      for (const rawBody of raw) {
        const res = await api(gw, 'POST', '/v1/keys', { key: acct.key, rawBody });
        expect(res.status).toBeGreaterThanOrEqual(400);
        expect(res.status).toBeLessThan(500);
      }
      for (const id of ['99999999999999999999', '-1', '1e3', '%00', '0x10']) {
        const res = await api(gw, 'PATCH', `/v1/keys/${id}`, { key: acct.key, body: { rpm: 1 } });
        expect([400, 404, 422]).toContain(res.status);
      }
      const filtered = await api(gw, 'GET', '/v1/tasks?key_id=99999999999999999999', { key: acct.key });
      expect(filtered.status).toBe(422);
      expect(filtered.body.data.message).toContain('key_id');
    });

    test('admin endpoints manage any account’s keys', async () => {
      const acct = await createAccount(gw, uniqueEmail('keys-admin'));
      const made = await api(gw, 'POST', `/admin/accounts/${acct.userId}/keys`, {
        key: ADMIN_TOKEN,
        body: { name: 'ops', tpm: 1000 },
      });
      expect(made.status).toBe(200);
      const list = await api(gw, 'GET', `/admin/accounts/${acct.userId}/keys`, { key: ADMIN_TOKEN });
      expect(list.body.data.map((k: { name: string }) => k.name)).toEqual(['default', 'ops']);
      const patched = await api(gw, 'PATCH', `/admin/accounts/${acct.userId}/keys/${made.body.data.id}`, {
        key: ADMIN_TOKEN,
        body: { tpm: 'lots' },
      });
      expect(patched.status).toBe(422);
      expect(patched.body.data.message).toContain('tpm');
      const other = await createAccount(gw, uniqueEmail('keys-admin2'));
      expect(
        (await api(gw, 'DELETE', `/admin/accounts/${other.userId}/keys/${made.body.data.id}`, { key: ADMIN_TOKEN }))
          .status,
      ).toBe(404);
      expect(
        (await api(gw, 'DELETE', `/admin/accounts/${acct.userId}/keys/${made.body.data.id}`, { key: ADMIN_TOKEN }))
          .status,
      ).toBe(200);
      expect((await api(gw, 'GET', '/v1/account', { key: made.body.data.key })).status).toBe(401);
    });

    test('the admin CLI lists, creates, changes and revokes keys', async () => {
      const acct = await createAccount(gw, uniqueEmail('keys-cli'));
      const run = (...args: string[]) =>
        runCommand([process.execPath, 'run', 'src/cli/admin.ts', ...args], {
          cwd: `${import.meta.dir}/../..`,
          env: { PATH: process.env.PATH ?? '', ADMIN_TOKEN, GATEWAY_URL: gw.url },
        });
      const user = String(acct.userId);
      const made = await run('key-create', user, 'batch', '{"budget_usd":2,"budget_period":"week"}');
      expect(made.code).toBe(0);
      const key = JSON.parse(made.out);
      expect(key).toMatchObject({ name: 'batch', budget_usd: 2, budget_period: 'week' });
      expect((await api(gw, 'GET', '/v1/account', { key: key.key })).status).toBe(200);
      const changed = await run('key-update', user, String(key.id), '{"rpm":30}');
      expect(JSON.parse(changed.out).rpm).toBe(30);
      const bad = await run('key-update', user, String(key.id), '{"budget_period":"year"}');
      expect(bad.code).not.toBe(0);
      expect(bad.err).toContain('budget_period');
      const listed = await run('keys', user);
      expect(JSON.parse(listed.out).map((k: { name: string }) => k.name)).toEqual(['default', 'batch']);
      expect((await run('key-revoke', user, String(key.id))).code).toBe(0);
      expect((await api(gw, 'GET', '/v1/account', { key: key.key })).status).toBe(401);
    });

    test('models outside the allow-list: 403 in each endpoint’s shape (SDKs raise PermissionDeniedError)', async () => {
      const acct = await createAccount(gw, uniqueEmail('keys-models'));
      const only = await createKey(gw, acct.key, { name: 'echo only', models: ['sandbox/echo'] });
      const openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: only.key, maxRetries: 0 });
      const ok = await openai.chat.completions.create({
        model: 'sandbox/echo',
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(ok.choices[0]?.message.content).toBe('echo: hi');
      const image = await api(gw, 'POST', '/v1/tasks', {
        key: only.key,
        body: { model: 'sandbox/image', input: { prompt: 'fox' } },
      });
      expect(image.status).toBe(403);
      expect(image.body).toMatchObject({ success: false, code: 403 });
      expect(image.body.data.message).toContain('model_not_allowed');

      const slug = await createKey(gw, acct.key, { name: 'images', models: ['sandbox/image'] });
      const denied = await new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: slug.key, maxRetries: 0 }).chat.completions
        .create({ model: 'sandbox/echo', messages: [{ role: 'user', content: 'hi' }] })
        .catch((e: unknown) => e);
      expect(denied).toBeInstanceOf(OpenAI.PermissionDeniedError);
      expect((denied as InstanceType<typeof OpenAI.PermissionDeniedError>).code).toBe('model_not_allowed');
      // A refusal costs nothing, and says so.
      expect((denied as InstanceType<typeof OpenAI.PermissionDeniedError>).headers?.get('x-gateway-cost-usd')).toBe(
        '0',
      );
      const deniedA = await new Anthropic({ baseURL: gw.url, apiKey: slug.key, maxRetries: 0 }).messages
        .create({ model: 'sandbox/echo', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })
        .catch((e: unknown) => e);
      expect(deniedA).toBeInstanceOf(Anthropic.PermissionDeniedError);
      const provider = await createKey(gw, acct.key, { name: 'sandbox', models: ['sandbox'] });
      const created = await api(gw, 'POST', '/v1/tasks', {
        key: provider.key,
        body: { model: 'sandbox/image', input: { prompt: 'fox', delay_ms: 0 } },
      });
      expect(created.status).toBe(200);
    });

    test('embeddings and count_tokens keep to the key: allow-list, budget, tpm, key_id on the records', async () => {
      const acct = await createAccount(gw, uniqueEmail('keys-embed'), 10);
      const chatOnly = await createKey(gw, acct.key, { name: 'chat only', models: ['sandbox/echo'] });
      const denied = await new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: chatOnly.key, maxRetries: 0 }).embeddings
        .create({ model: 'sandbox/embed', input: 'hello' })
        .catch((e: unknown) => e);
      expect(denied).toBeInstanceOf(OpenAI.PermissionDeniedError);
      expect((denied as InstanceType<typeof OpenAI.PermissionDeniedError>).code).toBe('model_not_allowed');
      const imagesOnly = await createKey(gw, acct.key, { name: 'images only', models: ['sandbox/image'] });
      const uncounted = await new Anthropic({ baseURL: gw.url, apiKey: imagesOnly.key, maxRetries: 0 }).messages
        .countTokens({ model: 'sandbox/echo', messages: [{ role: 'user', content: 'hi' }] })
        .catch((e: unknown) => e);
      expect(uncounted).toBeInstanceOf(Anthropic.PermissionDeniedError);
      const counted = await new Anthropic({
        baseURL: gw.url,
        apiKey: chatOnly.key,
        maxRetries: 0,
      }).messages.countTokens({ model: 'sandbox/echo', messages: [{ role: 'user', content: 'hi' }] });
      expect(counted.input_tokens).toBeGreaterThan(0);

      // sandbox/embed: $0.02 per million tokens. 2,000 characters hold their 2,001 bytes ($0.00004)
      // and cost their 400 words: two calls fit $0.00005, the third does not.
      const budget = 0.00005;
      const budgeted = await createKey(gw, acct.key, { name: 'embed budget', budget_usd: budget });
      const openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: budgeted.key, maxRetries: 0 });
      const input = 'word '.repeat(400);
      let ok = 0;
      let refused: unknown;
      for (let i = 0; i < 10 && !refused; i++)
        await openai.embeddings.create({ model: 'sandbox/embed', input }).then(
          () => ok++,
          (e: unknown) => {
            refused = e;
          },
        );
      expect(ok).toBeGreaterThan(0);
      expect(refused).toBeInstanceOf(OpenAI.APIError);
      expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
      expect((refused as InstanceType<typeof OpenAI.APIError>).code).toBe('key_budget_exceeded');
      const key = (await listKeys(gw, acct.key)).find((x) => x.id === budgeted.id);
      const records = await api(gw, 'GET', `/v1/tasks?key_id=${budgeted.id}&category=embedding`, { key: acct.key });
      const items = records.body.data as Array<{ cost: number }>;
      expect(items).toHaveLength(ok);
      expect(units(key?.spend_usd as number)).toBe(items.reduce((n, t) => n + units(t.cost), 0));
      expect(units(key?.spend_usd as number)).toBeLessThanOrEqual(units(budget));

      // 2,000 characters are about 500 tokens: over a tpm of 100.
      const slow = await createKey(gw, acct.key, { name: 'embed tpm', tpm: 100 });
      const limited = await new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: slow.key, maxRetries: 0 }).embeddings
        .create({ model: 'sandbox/embed', input })
        .catch((e: unknown) => e);
      expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
      expect((limited as InstanceType<typeof OpenAI.RateLimitError>).code).toBe('key_tpm_exceeded');
    });

    test('a refund of a task charged before the budget period changed leaves the new count as it is', async () => {
      const acct = await createAccount(gw, uniqueEmail('keys-period'), 10);
      const k = await createKey(gw, acct.key, { name: 'two a day', budget_usd: 0.02 });
      const create = (input: Record<string, unknown>) =>
        api(gw, 'POST', '/v1/tasks', {
          key: k.key,
          body: { model: 'sandbox/image', input: { prompt: 'fox', ...input } },
        });
      // Two tasks spend the lifetime budget; both will fail and be refunded.
      const failing = [await create({ delay_ms: 1500, fail: true }), await create({ delay_ms: 1500, fail: true })];
      expect(failing.map((r) => r.status)).toEqual([200, 200]);
      expect((await create({ delay_ms: 0 })).status).toBe(402);
      // A daily budget from now on: today's count starts at 0 and takes two more tasks.
      expect(
        (await api(gw, 'PATCH', `/v1/keys/${k.id}`, { key: acct.key, body: { budget_period: 'day' } })).status,
      ).toBe(200);
      expect((await create({ delay_ms: 0 })).status).toBe(200);
      expect((await create({ delay_ms: 0 })).status).toBe(200);
      expect((await create({ delay_ms: 0 })).status).toBe(402);
      // The two failed tasks' refunds go back to the account, not off today's count, which never
      // held them: today's $0.02 stays spent (the refunds took it to 0, and two more were admitted).
      for (const task of failing) {
        for (let i = 0; i < 100; i++) {
          const view = await api(gw, 'GET', `/v1/tasks/${task.body.data.task_id}`, { key: acct.key });
          if (view.body.data.status === 'failed') break;
          await Bun.sleep(100);
        }
      }
      const key = (await listKeys(gw, acct.key)).find((x) => x.id === k.id);
      expect(units(key?.spend_usd as number)).toBe(units(0.02));
      expect((await create({ delay_ms: 0 })).status).toBe(402);
      // Setting the period a key already has changes nothing: its task's refund still comes off.
      const daily = await createKey(gw, acct.key, { name: 'one a day', budget_usd: 0.01, budget_period: 'day' });
      const once = (input: Record<string, unknown>) =>
        api(gw, 'POST', '/v1/tasks', {
          key: daily.key,
          body: { model: 'sandbox/image', input: { prompt: 'fox', ...input } },
        });
      const refunded = await once({ delay_ms: 1000, fail: true });
      expect(refunded.status).toBe(200);
      const same = await api(gw, 'PATCH', `/v1/keys/${daily.id}`, { key: acct.key, body: { budget_period: 'day' } });
      expect(same.status).toBe(200);
      let status = 402;
      for (let i = 0; i < 100 && status === 402; i++) {
        await Bun.sleep(100);
        status = (await once({ delay_ms: 0 })).status;
      }
      expect(status).toBe(200);
    });

    test('an expired key is refused', async () => {
      const acct = await createAccount(gw, uniqueEmail('keys-expiry'));
      const soon = await createKey(gw, acct.key, { name: 'soon', expires_at: Math.ceil(Date.now() / 1000) + 2 });
      expect((await api(gw, 'GET', '/v1/account', { key: soon.key })).status).toBe(200);
      await Bun.sleep(3100);
      expect((await api(gw, 'GET', '/v1/account', { key: soon.key })).status).toBe(401);
    });

    test('4K parallel task creates on a budget for K tasks → exactly K; key_id filter; refunds leave the spend', async () => {
      const K = 12;
      const acct = await createAccount(gw, uniqueEmail('keys-budget'), 100);
      const budgeted = await createKey(gw, acct.key, { name: 'k tasks', budget_usd: K * 0.01, budget_period: 'day' });
      const results = await Promise.all(
        Array.from({ length: 4 * K }, () =>
          api(gw, 'POST', '/v1/tasks', {
            key: budgeted.key,
            body: { model: 'sandbox/image', input: { prompt: 'fox', delay_ms: 60000 } },
          }),
        ),
      );
      expect(results.filter((r) => r.status === 200)).toHaveLength(K);
      const refused = results.filter((r) => r.status === 402);
      expect(refused).toHaveLength(3 * K);
      expect(refused[0]?.body.data.message).toContain('key_budget_exceeded');
      const [, key] = await listKeys(gw, acct.key);
      expect(units(key?.spend_usd as number)).toBe(units(K * 0.01));
      // The account's other keys are not held back by this one's budget.
      expect(
        (
          await api(gw, 'POST', '/v1/tasks', {
            key: acct.key,
            body: { model: 'sandbox/image', input: { prompt: 'fox', delay_ms: 0 } },
          })
        ).status,
      ).toBe(200);
      const mine = await api(gw, 'GET', `/v1/tasks?key_id=${budgeted.id}&page_size=100`, { key: acct.key });
      const items = mine.body.data as Array<{ key_id: number }>;
      expect(items).toHaveLength(K);
      expect(items.every((t) => t.key_id === budgeted.id)).toBe(true);
      expect((await api(gw, 'GET', '/v1/tasks?key_id=abc', { key: acct.key })).status).toBe(422);
      // A failed task is refunded: the key's spend goes down with it.
      const spare = await createKey(gw, acct.key, { name: 'spare', budget_usd: 0.01 });
      const failing = await api(gw, 'POST', '/v1/tasks', {
        key: spare.key,
        body: { model: 'sandbox/image', input: { prompt: 'fox', delay_ms: 0, fail: true } },
      });
      expect(failing.status).toBe(200);
      const deadline = Date.now() + 15_000;
      let spend = -1;
      while (Date.now() < deadline) {
        spend = (await listKeys(gw, acct.key)).find((k) => k.id === spare.id)?.spend_usd as number;
        if (spend === 0) break;
        await Bun.sleep(100);
      }
      expect(spend).toBe(0);
    });

    test('parallel LLM streams never take a key past its budget; spend equals the recorded costs; cost header', async () => {
      const acct = await createAccount(gw, uniqueEmail('keys-llm'), 100);
      // sandbox/echo: $1 in / $2 out per million tokens. A call of 3000 words echoes them back: it
      // costs about $0.009 and holds about $0.014 (its input's bytes + max_tokens), so the budget
      // runs out after a few calls whether they overlap or not.
      const budget = 0.05;
      const words = Array.from({ length: 3000 }, (_, i) => `w${i % 10}`).join(' ');
      const k = await createKey(gw, acct.key, { name: 'llm', budget_usd: budget });
      const openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: k.key, maxRetries: 0 });
      const run = async () => {
        try {
          const stream = await openai.chat.completions.create({
            model: 'sandbox/echo',
            max_tokens: 4000,
            stream: true,
            messages: [{ role: 'user', content: words }],
          });
          for await (const _ of stream) {
            // drain
          }
          return 'ok';
        } catch (err) {
          if (err instanceof OpenAI.APIError && err.status === 402) {
            expect(err.code).toBe('key_budget_exceeded');
            return 'refused';
          }
          throw err;
        }
      };
      const outcomes = await Promise.all(Array.from({ length: 30 }, run));
      expect(outcomes).toContain('ok');
      expect(outcomes).toContain('refused');
      const key = (await listKeys(gw, acct.key)).find((x) => x.id === k.id);
      expect(units(key?.spend_usd as number)).toBeLessThanOrEqual(units(budget));
      const records = await api(gw, 'GET', `/v1/tasks?key_id=${k.id}&page_size=100&category=llm`, { key: acct.key });
      const items = records.body.data as Array<{ cost: number }>;
      expect(items).toHaveLength(outcomes.filter((o) => o === 'ok').length);
      const total = items.reduce((n, t) => n + units(t.cost), 0);
      expect(units(key?.spend_usd as number)).toBe(total);
      // Lowered to what it spent, the budget covers nothing more: Messages refuses in Anthropic's shape.
      const lowered = await api(gw, 'PATCH', `/v1/keys/${k.id}`, {
        key: acct.key,
        body: { budget_usd: key?.spend_usd },
      });
      expect(lowered.status).toBe(200);
      const anthropic = new Anthropic({ baseURL: gw.url, apiKey: k.key, maxRetries: 0 });
      const refused = await anthropic.messages
        .create({ model: 'sandbox/echo', max_tokens: 4000, messages: [{ role: 'user', content: words }] })
        .catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(Anthropic.APIError);
      expect((refused as InstanceType<typeof Anthropic.APIError>).status).toBe(402);
      expect(JSON.stringify((refused as InstanceType<typeof Anthropic.APIError>).error)).toContain(
        'key_budget_exceeded',
      );
      // A non-streamed answer names its charge.
      const raw = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${acct.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'sandbox/echo', messages: [{ role: 'user', content: 'a b' }] }),
      });
      const body = (await raw.json()) as { usage: { prompt_tokens: number; completion_tokens: number } };
      const expected = (body.usage.prompt_tokens * 1 + body.usage.completion_tokens * 2) / 1_000_000;
      expect(Number(raw.headers.get('x-gateway-cost-usd'))).toBeCloseTo(expected, 12);
    });
  });
}

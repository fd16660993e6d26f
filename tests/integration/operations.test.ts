import { describe, expect, test } from 'bun:test';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { api, awayFromMinuteBoundary, createAccount, uniqueEmail } from '../helpers/api.ts';
import { ADMIN_TOKEN, MODES, startGateway } from '../helpers/gateway-process.ts';
import { runCommand } from '../helpers/run-command.ts';
import { scenarioModel, startFakeLlmUpstream } from '../helpers/fake-llm-upstream.ts';

const ROOT = resolve(import.meta.dir, '../..');

describe('operations', () => {
  for (const mode of MODES) {
    test(`rate limit per key answers 429 with Retry-After [${mode.name}]`, async () => {
      const gw = await startGateway({ ...(await mode.env('ratelimit')), RATE_LIMIT_PER_MINUTE: '5' });
      try {
        const a = await createAccount(gw, uniqueEmail('rl'));
        const b = await createAccount(gw, uniqueEmail('rl'));
        await awayFromMinuteBoundary();
        const statuses: number[] = [];
        for (let i = 0; i < 7; i++) statuses.push((await api(gw, 'GET', '/v1/account', { key: a.key })).status);
        expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
        const limited = await api(gw, 'GET', '/v1/models', { key: a.key });
        expect(limited.status).toBe(429);
        expect(limited.body).toEqual({ success: false, code: 429, data: { message: 'rate limit exceeded' } });
        const retryAfter = Number(limited.headers.get('retry-after'));
        expect(retryAfter).toBeGreaterThanOrEqual(1);
        expect(retryAfter).toBeLessThanOrEqual(60);
        // Another key has its own budget.
        expect((await api(gw, 'GET', '/v1/account', { key: b.key })).status).toBe(200);
      } finally {
        await gw.stop();
      }
    });

    test(`an account's keys together are held to the account's limit: new keys add nothing [${mode.name}]`, async () => {
      const gw = await startGateway({
        ...(await mode.env('ratelimit-account')),
        RATE_LIMIT_PER_MINUTE: '5',
        RATE_LIMIT_PER_ACCOUNT_PER_MINUTE: '8',
      });
      try {
        const a = await createAccount(gw, uniqueEmail('rl-acct'));
        const other = await createAccount(gw, uniqueEmail('rl-acct'));
        await awayFromMinuteBoundary();
        const second = await api(gw, 'POST', '/v1/keys', { key: a.key, body: { name: 'second' } });
        expect(second.status).toBe(200);
        const statuses = async (key: string, n: number) => {
          const out: number[] = [];
          for (let i = 0; i < n; i++) out.push((await api(gw, 'GET', '/v1/account', { key })).status);
          return out;
        };
        // Creating the key was the account's first request; its first key has 4 more of its 5.
        expect(await statuses(a.key, 5)).toEqual([200, 200, 200, 200, 429]);
        // The new key's own 5 are capped by the account's 8: three left.
        expect(await statuses(second.body.data.key, 4)).toEqual([200, 200, 200, 429]);
        expect((await api(gw, 'GET', '/v1/account', { key: other.key })).status).toBe(200);
      } finally {
        await gw.stop();
      }
    });
  }

  test('SIGTERM lets an in-flight request finish, then exits 0', async () => {
    const gw = await startGateway(await MODES[1]!.env('shutdown'));
    const { key } = await createAccount(gw, uniqueEmail('term'));
    // A slow upload body keeps a request in flight while the signal arrives.
    let push!: (chunk: string) => void;
    let end!: () => void;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        push = (chunk) => controller.enqueue(new TextEncoder().encode(chunk));
        end = () => controller.close();
      },
    });
    const pending = fetch(`${gw.url}/v1/account/webhook-signing`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body,
      // @ts-expect-error Bun supports streaming request bodies with duplex
      duplex: 'half',
    });
    push('{"enabled":');
    await Bun.sleep(200);
    gw.proc.kill('SIGTERM');
    await Bun.sleep(200);
    push(' true}');
    end();
    const res = await pending;
    expect(res.status).toBe(200);
    expect((await res.json()).data.enabled).toBe(true);
    expect(await gw.proc.exited).toBe(0);
    expect(gw.output()).toContain('"msg":"stopped"');
  });

  test('SIGTERM with a stream still running: the stream is cut at the grace, and the gateway exits', async () => {
    const fake = await startFakeLlmUpstream('openai', { apiKey: 'sk-shutdown' });
    const dir = await mkdtemp(join(tmpdir(), 'gw-shutdown-'));
    const config = join(dir, 'gateway.json');
    await writeFile(
      config,
      JSON.stringify({
        providers: [{ id: 'slow', kind: 'openai', base_url: fake.baseUrl, api_key: fake.apiKey }],
        models: [scenarioModel('slow', 'slow-stream')],
      }),
    );
    const gw = await startGateway({ ...(await MODES[1]!.env('shutdown-stream')), GATEWAY_CONFIG: config });
    try {
      const { key } = await createAccount(gw, uniqueEmail('term-stream'));
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'slow/slow-stream', stream: true, messages: [{ role: 'user', content: 'x' }] }),
      });
      expect(res.status).toBe(200);
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      await reader.read();
      const signalled = Date.now();
      gw.proc.kill('SIGTERM');
      // The upstream streams for a minute; the gateway's grace is 10 s.
      const code = await Promise.race([gw.proc.exited, Bun.sleep(20_000).then(() => 'still running')]);
      expect(code).toBe(0);
      expect(Date.now() - signalled).toBeLessThan(15_000);
      await reader.cancel().catch(() => undefined);
    } finally {
      await gw.stop();
      await fake.stop();
    }
  }, 40_000);

  test('the admin CLI creates, tops up and shows accounts', async () => {
    const gw = await startGateway(await MODES[1]!.env('cli'));
    try {
      const run = (...args: string[]) =>
        runCommand([process.execPath, 'run', 'src/cli/admin.ts', ...args], {
          cwd: ROOT,
          env: { PATH: process.env.PATH ?? '', ADMIN_TOKEN, GATEWAY_URL: gw.url },
        });
      const email = uniqueEmail('cli');
      const created = await run('create', email, '3');
      expect(created.code).toBe(0);
      const account = JSON.parse(created.out);
      expect(account.email).toBe(email);
      expect(account.api_key).toMatch(/^gw_/);
      const topped = await run('topup', String(account.user_id), '2.5');
      expect(JSON.parse(topped.out).balance_usd).toBe(5.5);
      // With a key given, the same top-up run again credits nothing more.
      for (let i = 0; i < 2; i++) {
        const once = await run('topup', String(account.user_id), '1', 'invoice-7');
        expect(once.code).toBe(0);
        expect(JSON.parse(once.out).balance_usd).toBe(6.5);
      }
      const shown = await run('show', String(account.user_id));
      expect(JSON.parse(shown.out).email).toBe(email);
      const bad = await run('topup', String(account.user_id), 'lots');
      expect(bad.code).not.toBe(0);
      expect(bad.err).toContain('amount_usd must be a decimal number');
      // Hex, binary or an exponent would name another account or another sum.
      for (const args of [
        ['topup', '0b11', '1'],
        ['topup', String(account.user_id), '0x10'],
        ['show', '2e0'],
      ]) {
        const refused = await run(...args);
        expect(refused.code).not.toBe(0);
        expect(refused.err).toMatch(/must be a (whole number of decimal digits|decimal number)/);
      }
      expect(JSON.parse((await run('show', String(account.user_id))).out).balance_usd).toBe(6.5);
      const missing = await run('show', '999999');
      expect(missing.code).not.toBe(0);
      expect(missing.err).toContain('404');
    } finally {
      await gw.stop();
    }
  });
});

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { api, awayFromMinuteBoundary, createAccount, uniqueEmail } from '../helpers/api.ts';
import { ADMIN_TOKEN, MODES, startGateway, type GatewayProcess } from '../helpers/gateway-process.ts';
import { peakRssGrowth, rawRequest, type RawBody, type RawResponse } from '../helpers/raw-http.ts';
import { REDIS_URL, createTestDatabase } from '../helpers/services.ts';

const MIB = 1024 * 1024;
const JSON_CAP = MIB;
const LLM_CAP = 32 * MIB;
const BODY_TIMEOUT_MS = 1500;
const JSON_TYPE = { 'content-type': 'application/json' };

/** What each endpoint's refusals look like: the envelope, or the LLM formats' own shapes. */
type Shape = 'envelope' | 'openai' | 'anthropic';

function expectShape(res: RawResponse, status: number, shape: Shape, message: string | RegExp) {
  expect(res.status).toBe(status);
  const text = (m: string) => (typeof message === 'string' ? expect(m).toBe(message) : expect(m).toMatch(message));
  if (shape === 'envelope') {
    expect(res.json).toEqual({ success: false, code: status, data: { message: expect.any(String) } });
    text(res.json.data.message);
  } else if (shape === 'openai') {
    expect(Object.keys(res.json.error).sort()).toEqual(['code', 'message', 'param', 'type']);
    expect(res.json.error.type).toEqual(expect.any(String));
    text(res.json.error.message);
  } else {
    expect(res.json).toEqual({ type: 'error', error: { type: expect.any(String), message: expect.any(String) } });
    text(res.json.error.message);
  }
}

/** A small JSON request over a raw socket, optionally from another loopback address. */
function rawJson(
  gw: GatewayProcess,
  method: string,
  path: string,
  opts: { headers?: Record<string, string>; body?: unknown; from?: string } = {},
) {
  const data =
    opts.body === undefined
      ? undefined
      : new TextEncoder().encode(typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body));
  return rawRequest(gw.port, {
    method,
    path,
    headers: { ...JSON_TYPE, ...opts.headers },
    body: data ? { data } : undefined,
    localAddress: opts.from,
  });
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

for (const mode of MODES) {
  describe(`hostile request bodies [${mode.name}]`, () => {
    let gw: GatewayProcess;
    let key: string;

    beforeAll(async () => {
      gw = await startGateway({ ...(await mode.env('hostile')), BODY_TIMEOUT_MS: String(BODY_TIMEOUT_MS) });
      ({ key } = await createAccount(gw, uniqueEmail('hostile'), 5));
    });
    afterAll(async () => {
      await gw?.stop();
    });

    const endpoints: Array<{ path: string; cap: number; shape: Shape; auth: () => Record<string, string> }> = [
      { path: '/v1/tasks', cap: JSON_CAP, shape: 'envelope', auth: () => bearer(key) },
      { path: '/v1/chat/completions', cap: LLM_CAP, shape: 'openai', auth: () => bearer(key) },
      { path: '/v1/messages', cap: LLM_CAP, shape: 'anthropic', auth: () => ({ 'x-api-key': key }) },
      { path: '/admin/accounts', cap: JSON_CAP, shape: 'envelope', auth: () => bearer(ADMIN_TOKEN) },
    ];

    test('a 300 MB body without a key is answered 401 without being read: RSS stays flat, the connection is closed', async () => {
      for (const chunked of [false, true]) {
        const { result, growthBytes } = await peakRssGrowth(gw.proc.pid, () =>
          rawRequest(gw.port, {
            method: 'POST',
            path: '/v1/tasks',
            headers: JSON_TYPE,
            body: { total: 300_000_000, chunked },
          }),
        );
        expectShape(result, 401, 'envelope', 'invalid or missing API key');
        expect(result.headers.connection).toBe('close');
        expect(result.closed).toBe(true);
        // The answer came long before the body could have been sent.
        expect(result.sentBytes).toBeLessThan(64 * MIB);
        expect(growthBytes).toBeLessThan(50 * MIB);
      }
      // The same on an LLM route, in its own shape.
      const llm = await rawRequest(gw.port, {
        method: 'POST',
        path: '/v1/chat/completions',
        headers: JSON_TYPE,
        body: { total: 300_000_000, chunked: true },
      });
      expectShape(llm, 401, 'openai', 'invalid or missing API key');
      expect(llm.closed).toBe(true);
      expect((await api(gw, 'GET', '/healthz')).status).toBe(200);
    });

    test('over-cap bodies are refused 413 in each endpoint’s own shape, with and without Content-Length, and nothing is charged', async () => {
      const before = (await api(gw, 'GET', '/v1/account', { key })).body.data.balance_usd;
      for (const { path, cap, shape, auth } of endpoints) {
        for (const chunked of [false, true]) {
          // A valid task request padded past the cap, so only the size can refuse it.
          const padded = `{"model":"sandbox/image","input":{"prompt":"x"},"pad":"${'a'.repeat(cap)}"}`;
          const body: RawBody = { data: new TextEncoder().encode(padded), chunked };
          const res = await rawRequest(gw.port, { method: 'POST', path, headers: { ...JSON_TYPE, ...auth() }, body });
          expectShape(res, 413, shape, `request body is larger than ${cap} bytes`);
          expect(res.headers.connection).toBe('close');
          expect(res.closed).toBe(true);
        }
      }
      expect((await api(gw, 'GET', '/v1/account', { key })).body.data.balance_usd).toBe(before);
      expect((await api(gw, 'GET', '/v1/tasks', { key })).body.pagination.total).toBe(0);
      expect((await api(gw, 'GET', '/v1/tasks?category=llm', { key })).body.pagination.total).toBe(0);
    });

    test('a declared Content-Length over the cap is refused before a byte of the body is read', async () => {
      for (const { path, cap, shape, auth } of endpoints) {
        // Sent slowly: reading up to the cap would take the whole body's worth of delays.
        const res = await rawRequest(gw.port, {
          method: 'POST',
          path,
          headers: { ...JSON_TYPE, ...auth() },
          body: { total: 64 * 1024 * 40, declaredLength: cap + 1, chunkSize: 64 * 1024, delayMs: 25 },
        });
        expectShape(res, 413, shape, `request body is larger than ${cap} bytes`);
        expect(res.sentBytes).toBeLessThanOrEqual(2 * 64 * 1024);
        expect(res.closed).toBe(true);
      }
    });

    test('a stalled or dripping body is cut at BODY_TIMEOUT_MS: 408 in the endpoint’s shape, connection closed', async () => {
      const stalled = await rawRequest(gw.port, {
        method: 'POST',
        path: '/v1/tasks',
        headers: { ...JSON_TYPE, ...bearer(key) },
        body: { total: 1000, stallAfter: 10 },
        timeoutMs: 10_000,
      });
      expectShape(stalled, 408, 'envelope', /did not arrive within 1.5 s/);
      expect(stalled.elapsedMs).toBeGreaterThanOrEqual(BODY_TIMEOUT_MS - 100);
      expect(stalled.elapsedMs).toBeLessThan(BODY_TIMEOUT_MS + 2000);
      expect(stalled.closed).toBe(true);
      // Slow-loris: one byte every 100 ms never stalls long enough for an idle timeout.
      const drip = await rawRequest(gw.port, {
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { ...JSON_TYPE, ...bearer(key) },
        body: { total: 1000, chunkSize: 1, delayMs: 100, chunked: true },
        timeoutMs: 10_000,
      });
      expectShape(drip, 408, 'openai', /did not arrive within 1.5 s/);
      expect(drip.elapsedMs).toBeLessThan(BODY_TIMEOUT_MS + 2000);
      expect(drip.closed).toBe(true);
      const messages = await rawRequest(gw.port, {
        method: 'POST',
        path: '/v1/messages',
        headers: { ...JSON_TYPE, 'x-api-key': key },
        body: { total: 1000, stallAfter: 1 },
        timeoutMs: 10_000,
      });
      expectShape(messages, 408, 'anthropic', /did not arrive within 1.5 s/);
    });

    test('an upload body that falls behind 1 KiB a second after BODY_TIMEOUT_MS is cut: 408, connection closed', async () => {
      const boundary = 'b0undary';
      const head = new TextEncoder().encode(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="x"\r\n\r\n`,
      );
      const data = new Uint8Array(head.byteLength + 64 * 1024);
      data.set(head);
      const multipart = { ...bearer(key), 'content-type': `multipart/form-data; boundary=${boundary}` };
      // Stalled after its first bytes, and dripping 50 bytes a second: each held its connection
      // until Bun's idle timeout (minutes) between drops.
      for (const body of [
        { data, stallAfter: head.byteLength + 100 },
        { data, chunkSize: 10, delayMs: 200 },
        { data, chunkSize: 10, delayMs: 200, chunked: true },
      ]) {
        const slow = await rawRequest(gw.port, {
          method: 'PUT',
          path: '/upload',
          headers: multipart,
          body,
          timeoutMs: 10_000,
        });
        expectShape(slow, 408, 'envelope', /request body arrived slower than 1024 bytes a second/);
        expect(slow.elapsedMs).toBeGreaterThanOrEqual(BODY_TIMEOUT_MS - 100);
        expect(slow.elapsedMs).toBeLessThan(BODY_TIMEOUT_MS + 2000);
        expect(slow.closed).toBe(true);
      }
      // Base64 JSON too.
      const json = await rawRequest(gw.port, {
        method: 'PUT',
        path: '/upload',
        headers: { ...JSON_TYPE, ...bearer(key) },
        body: { data: new TextEncoder().encode(`{"base64":"${'QUFB'.repeat(4096)}"}`), stallAfter: 200 },
        timeoutMs: 10_000,
      });
      expectShape(json, 408, 'envelope', /request body arrived slower than/);
      // A body that keeps up, however long it takes past the grace, is stored: 64 KiB at 16 KiB a second.
      const steady = await rawRequest(gw.port, {
        method: 'PUT',
        path: '/upload',
        headers: multipart,
        body: {
          data: new Uint8Array([...data, ...new TextEncoder().encode(`\r\n--${boundary}--\r\n`)]),
          chunkSize: 4096,
          delayMs: 250,
        },
        timeoutMs: 20_000,
      });
      expect(steady.status).toBe(200);
      expect(steady.elapsedMs).toBeGreaterThan(BODY_TIMEOUT_MS);
    });

    test('JSON nested deeper than 64 levels is refused at parse time in each endpoint’s shape; 64 levels pass', async () => {
      const deep = nested(20_000);
      const cases: Array<[string, Record<string, string>, number, Shape]> = [
        ['/v1/tasks', bearer(key), 422, 'envelope'],
        ['/v1/chat/completions', bearer(key), 400, 'openai'],
        ['/v1/messages', { 'x-api-key': key }, 400, 'anthropic'],
        ['/admin/accounts', bearer(ADMIN_TOKEN), 422, 'envelope'],
        ['/v1/account/webhook-signing', bearer(key), 422, 'envelope'],
        ['/dashboard/api/session', {}, 422, 'envelope'],
      ];
      for (const [path, headers, status, shape] of cases) {
        // The sign-in body's own cap is 16 KiB: 5,000 levels fit under it.
        const body = path === '/dashboard/api/session' ? nested(5_000) : deep;
        const res = await rawJson(gw, 'POST', path, { headers, body });
        expectShape(res, status, shape, 'request body nests deeper than 64 levels');
      }
      // Exactly 64 levels is within the limit: the object itself and 63 arrays.
      const ok = await api(gw, 'POST', '/v1/account/webhook-signing', {
        key,
        rawBody: `{"enabled":false,"x":${nested(63)}}`,
      });
      expect(ok.status).toBe(200);
      const over = await api(gw, 'POST', '/v1/account/webhook-signing', {
        key,
        rawBody: `{"enabled":false,"x":${nested(64)}}`,
      });
      expect(over.status).toBe(422);
      expect((await api(gw, 'GET', '/healthz')).status).toBe(200);
    });

    test('ordinary bodies behave as before: bad JSON is 422 on tasks and 400 on LLM routes; a body-less POST still works', async () => {
      const tasks = await api(gw, 'POST', '/v1/tasks', { key, rawBody: '{"model":' });
      expect(tasks.status).toBe(422);
      expect(tasks.body).toEqual({ success: false, code: 422, data: { message: 'request body is not valid JSON' } });
      const chat = await api(gw, 'POST', '/v1/chat/completions', { key, rawBody: '{"model":' });
      expect(chat.status).toBe(400);
      expect(chat.body.error.message).toBe('request body is not valid JSON');
      const messages = await api(gw, 'POST', '/v1/messages', { headers: { 'x-api-key': key }, rawBody: '{"model":' });
      expect(messages.status).toBe(400);
      expect(messages.body.type).toBe('error');
      const dry = await api(gw, 'POST', '/v1/tasks', {
        key,
        body: { model: 'sandbox/image', input: { prompt: 'x' }, dry_run: true },
      });
      expect(dry.status).toBe(200);
      const echo = await api(gw, 'POST', '/v1/chat/completions', {
        key,
        body: { model: 'sandbox/echo', messages: [{ role: 'user', content: 'hi' }] },
      });
      expect(echo.status).toBe(200);
      const other = await createAccount(gw, uniqueEmail('nobody'));
      const regen = await api(gw, 'POST', '/v1/account/webhook-signing/reset', { key: other.key, headers: JSON_TYPE });
      expect(regen.status).toBe(200);
    });

    test('wrong dashboard sign-ins from one address get 429 with retry-after; another address signs in', async () => {
      await awayFromMinuteBoundary(5);
      const from = '127.0.0.5';
      const statuses: number[] = [];
      let last: RawResponse | undefined;
      for (let i = 0; i < 21; i++) {
        last = await rawJson(gw, 'POST', '/dashboard/api/session', { body: { api_key: `gw_wrong_${i}` }, from });
        statuses.push(last.status);
      }
      expect(statuses.slice(0, 20)).toEqual(new Array(20).fill(401));
      expect(statuses[20]).toBe(429);
      expect(Number(last?.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(last?.headers['retry-after'])).toBeLessThanOrEqual(60);
      expect(last?.json.data.message).toContain('too many failed authentication attempts');
      // Blocked: even the right key is refused from that address for now.
      expect((await rawJson(gw, 'POST', '/dashboard/api/session', { body: { api_key: key }, from })).status).toBe(429);
      const elsewhere = await rawJson(gw, 'POST', '/dashboard/api/session', {
        body: { api_key: key },
        from: '127.0.0.6',
      });
      expect(elsewhere.status).toBe(200);
      expect(elsewhere.headers['set-cookie']).toContain('gw_session=');
    });
  });
}

describe('hostile input across two instances sharing Postgres and Redis', () => {
  let a: GatewayProcess;
  let b: GatewayProcess;
  let key: string;
  const MAX_UPLOAD_BYTES = 4 * MIB;

  beforeAll(async () => {
    const databaseUrl = await createTestDatabase('hostile2');
    const env = {
      DATABASE_URL: databaseUrl,
      REDIS_URL,
      REDIS_KEY_PREFIX: `${new URL(databaseUrl).pathname.slice(1)}:`,
      AUTH_FAILURES_PER_MINUTE: '6',
      MAX_UPLOAD_BYTES: String(MAX_UPLOAD_BYTES),
    };
    a = await startGateway(env);
    b = await startGateway(env);
    ({ key } = await createAccount(a, uniqueEmail('hostile2'), 10));
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  test('a chunked upload over MAX_UPLOAD_BYTES is a 413, however the body is framed', async () => {
    const boundary = 'b0undary';
    const head = new TextEncoder().encode(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="x"\r\n\r\n`,
    );
    const data = new Uint8Array(head.byteLength + MAX_UPLOAD_BYTES + MIB);
    data.set(head);
    for (const chunkSize of [MIB, 64 * 1024, 4096 + 7]) {
      const res = await rawRequest(a.port, {
        method: 'PUT',
        path: '/upload',
        headers: { ...bearer(key), 'content-type': `multipart/form-data; boundary=${boundary}` },
        body: { data, chunked: true, chunkSize },
      });
      expectShape(res, 413, 'envelope', `file is larger than ${MAX_UPLOAD_BYTES} bytes`);
    }
    // As base64 JSON, chunked, too.
    const base64 = new TextEncoder().encode(`{"base64":"${'A'.repeat(Math.ceil((MAX_UPLOAD_BYTES + MIB) / 3) * 4)}"}`);
    const json = await rawRequest(a.port, {
      method: 'PUT',
      path: '/upload',
      headers: { ...bearer(key), ...JSON_TYPE },
      body: { data: base64, chunked: true, chunkSize: MIB },
    });
    expectShape(json, 413, 'envelope', `file is larger than ${MAX_UPLOAD_BYTES} bytes`);
    // And an upload without a key is refused before its body is read.
    const anonymous = await rawRequest(a.port, {
      method: 'PUT',
      path: '/upload',
      headers: JSON_TYPE,
      body: { data: base64, chunked: true },
    });
    expectShape(anonymous, 401, 'envelope', 'invalid or missing API key');
    expect(anonymous.closed).toBe(true);
  });

  test('failed authentications are throttled per address across instances, with retry-after; other addresses are not', async () => {
    await awayFromMinuteBoundary(5);
    const from = '127.0.0.7';
    const wrong = (gw: GatewayProcess, i: number) =>
      rawJson(gw, 'GET', '/v1/account', { headers: bearer(`gw_wrong_${i}_${'x'.repeat(40)}`), from });
    // Six failures allowed per minute, wherever they land.
    for (let i = 0; i < 3; i++) expect((await wrong(a, i)).status).toBe(401);
    for (let i = 3; i < 6; i++) expect((await wrong(b, i)).status).toBe(401);
    const seventh = await wrong(a, 6);
    expectShape(seventh, 429, 'envelope', /too many failed authentication attempts/);
    const retryAfter = Number(seventh.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // The other instance counts the same failures.
    expect((await wrong(b, 7)).status).toBe(429);
    // While blocked, the right key is refused from that address too, in each endpoint's shape…
    expect((await rawJson(a, 'GET', '/v1/account', { headers: bearer(key), from })).status).toBe(429);
    const chat = await rawJson(b, 'POST', '/v1/chat/completions', {
      headers: bearer(key),
      from,
      body: { model: 'sandbox/echo', messages: [{ role: 'user', content: 'hi' }] },
    });
    expectShape(chat, 429, 'openai', /too many failed authentication attempts/);
    expect(Number(chat.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    const admin = await rawJson(a, 'POST', '/admin/accounts', {
      headers: bearer(ADMIN_TOKEN),
      from,
      body: { email: uniqueEmail() },
    });
    expect(admin.status).toBe(429);
    // …while every other address goes on as before, on both instances.
    for (const gw of [a, b]) {
      expect((await rawJson(gw, 'GET', '/v1/account', { headers: bearer(key), from: '127.0.0.8' })).status).toBe(200);
      expect((await api(gw, 'GET', '/v1/account', { key })).status).toBe(200);
    }
    expect(
      (await rawJson(a, 'GET', '/v1/account', { headers: bearer('gw_wrong_elsewhere'), from: '127.0.0.8' })).status,
    ).toBe(401);
  });

  test('wrong dashboard sign-ins count across instances too', async () => {
    await awayFromMinuteBoundary(5);
    const from = '127.0.0.9';
    const signIn = (gw: GatewayProcess, apiKey: string) =>
      rawJson(gw, 'POST', '/dashboard/api/session', { body: { api_key: apiKey }, from });
    for (let i = 0; i < 6; i++) expect((await signIn(i % 2 ? a : b, `gw_nope_${i}`)).status).toBe(401);
    const refused = await signIn(a, 'gw_nope_6');
    expectShape(refused, 429, 'envelope', /too many failed authentication attempts/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((await signIn(b, 'gw_nope_7')).status).toBe(429);
    expect((await signIn(b, key)).status).toBe(429);
  });
});

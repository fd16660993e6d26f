import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { api, createAccount, uniqueEmail } from '../helpers/api.ts';
import { MODES, startGateway, type GatewayProcess } from '../helpers/gateway-process.ts';
import { REDIS_URL, createTestDatabase } from '../helpers/services.ts';
import { SWITCHABLE_USAGE, startSwitchableUpstream, type SwitchableUpstream } from '../helpers/switchable-upstream.ts';

/**
 * Routing (docs/routing.md): weighted deployments, failover before the first byte, fallbacks,
 * the per-request override, no failover on client errors, shared cooldowns, the stream idle
 * timeout and the exact cache — against upstreams that fail on demand, driven by the official SDKs.
 */

type Format = 'chat' | 'responses' | 'messages';
const FORMATS: Format[] = ['chat', 'responses', 'messages'];

/** $1/$2 per million for the cheap models, $10/$20 for the fallback. */
const cheap = { input_per_mtok: 1, output_per_mtok: 2 };
const dear = { input_per_mtok: 10, output_per_mtok: 20 };
const costAt = (p: typeof cheap) =>
  (SWITCHABLE_USAGE.prompt_tokens * p.input_per_mtok + SWITCHABLE_USAGE.completion_tokens * p.output_per_mtok) / 1e6;

interface Answer {
  text: string;
  model: string;
  headers: Headers;
}

/** One call in a client format through its official SDK, streamed or not; the text, body model and headers. */
async function ask(
  gw: GatewayProcess,
  key: string,
  format: Format,
  model: string,
  stream: boolean,
  headers: Record<string, string> = {},
  prompt = 'hi',
): Promise<Answer> {
  const opts = { headers, maxRetries: 0 };
  if (format === 'chat') {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key });
    const messages = [{ role: 'user' as const, content: prompt }];
    if (!stream) {
      const { data, response } = await client.chat.completions.create({ model, messages }, opts).withResponse();
      return { text: data.choices[0]?.message.content ?? '', model: data.model, headers: response.headers };
    }
    const { data, response } = await client.chat.completions
      .create({ model, messages, stream: true }, opts)
      .withResponse();
    let text = '';
    let seen = '';
    for await (const chunk of data) {
      text += chunk.choices[0]?.delta.content ?? '';
      seen = chunk.model;
    }
    return { text, model: seen, headers: response.headers };
  }
  if (format === 'responses') {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key });
    if (!stream) {
      const { data, response } = await client.responses.create({ model, input: prompt }, opts).withResponse();
      return { text: data.output_text, model: data.model, headers: response.headers };
    }
    const { data, response } = await client.responses
      .create({ model, input: prompt, stream: true }, opts)
      .withResponse();
    let text = '';
    let seen = '';
    for await (const event of data) {
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed') seen = event.response.model;
    }
    return { text, model: seen, headers: response.headers };
  }
  const client = new Anthropic({ baseURL: gw.url, apiKey: key });
  const params = { model, max_tokens: 100, messages: [{ role: 'user' as const, content: prompt }] };
  if (!stream) {
    const { data, response } = await client.messages.create(params, opts).withResponse();
    const text = data.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
    return { text, model: data.model, headers: response.headers };
  }
  const { data, response } = await client.messages.create({ ...params, stream: true }, opts).withResponse();
  let text = '';
  let seen = '';
  for await (const event of data) {
    if (event.type === 'message_start') seen = event.message.model;
    if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
  }
  return { text, model: seen, headers: response.headers };
}

/** Retries `check` until it stops throwing (other instances learn of health changes by pub/sub). */
async function until(check: () => Promise<void>, timeoutMs = 1_500): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await Bun.sleep(20);
    }
  }
}

const cases = FORMATS.flatMap((format) => [false, true].map((stream) => ({ format, stream })));

/** Models: `<provider>/<name>`; every model of a test has its own deployments, so health never leaks across tests. */
function writeConfig(dir: string, up: Record<'a' | 'b' | 'c' | 'd', SwitchableUpstream>) {
  const provider = (id: string, u: SwitchableUpstream, extra: object = {}) => ({
    id,
    kind: 'openai',
    base_url: u.baseUrl,
    api_key: 'k',
    max_retries: 0,
    cooldown_s: 2,
    ...extra,
  });
  const model = (id: string, pricing: object, extra: object = {}) => ({
    id,
    category: 'llm',
    upstream_model: id.split('/')[1],
    display_name: id,
    pricing,
    ...extra,
  });
  const config = {
    providers: [
      provider('pa', up.a, { stream_idle_timeout_ms: 700 }),
      provider('pb', up.b),
      provider('pc', up.c),
      provider('pd', up.d),
    ],
    models: [
      model('pa/weighted', cheap, { weight: 3, deployments: [{ provider: 'pb', weight: 1 }] }),
      model('pa/failover', cheap, { deployments: [{ provider: 'pb' }], fallbacks: ['pc/dear'] }),
      model('pa/override', cheap, { fallbacks: ['pc/dear'] }),
      model('pa/at-once', cheap, { deployments: [{ provider: 'pb', weight: 0 }] }),
      model('pa/client-error', cheap, { deployments: [{ provider: 'pb' }], fallbacks: ['pc/dear'] }),
      model('pa/cooldown', cheap, { fallbacks: ['pc/dear'] }),
      model('pa/lonely', cheap),
      model('pa/limited', cheap),
      model('pa/big', cheap, { deployments: [{ provider: 'pb' }], fallbacks: ['pc/dear'] }),
      model('pa/idle', cheap),
      model('pa/cached', cheap, { fallbacks: ['pc/dear'] }),
      model('pa/kept', cheap, { fallbacks: ['pc/dear'] }),
      model('pc/dear', dear),
      model('pd/other', cheap),
    ],
  };
  const path = join(dir, 'gateway.json');
  return writeFile(path, JSON.stringify(config)).then(() => path);
}

for (const mode of MODES) {
  describe(`routing (${mode.name})`, () => {
    const up = {
      a: startSwitchableUpstream('a'),
      b: startSwitchableUpstream('b'),
      c: startSwitchableUpstream('c'),
      d: startSwitchableUpstream('d'),
    };
    let gw: GatewayProcess;
    let key: string;
    let env: Record<string, string>;
    beforeAll(async () => {
      const dir = await mkdtemp(join(tmpdir(), 'gw-routing-'));
      env = {
        ...(await mode.env('routing')),
        GATEWAY_CONFIG: await writeConfig(dir, up),
        RATE_LIMIT_PER_MINUTE: '100000',
      };
      gw = await startGateway(env);
      key = (await createAccount(gw, uniqueEmail('routing'), 100)).key;
    });
    afterAll(async () => {
      await gw?.stop();
      for (const u of Object.values(up)) u.stop();
    });
    const reset = () => {
      for (const u of Object.values(up)) u.behaviour = 'ok';
    };

    test('weights are honoured over a few hundred calls', async () => {
      reset();
      const served = { pa: 0, pb: 0 };
      for (let batch = 0; batch < 40; batch++) {
        const answers = await Promise.all(Array.from({ length: 10 }, () => ask(gw, key, 'chat', 'pa/weighted', false)));
        for (const a of answers) served[a.headers.get('x-gateway-provider') as 'pa' | 'pb']++;
      }
      // 400 calls at 3:1 → 300 ± 40 (over 4 standard deviations).
      expect(served.pa + served.pb).toBe(400);
      expect(Math.abs(served.pa - 300)).toBeLessThan(40);
      expect(up.a.count('weighted')).toBe(served.pa);
      expect(up.b.count('weighted')).toBe(served.pb);
    }, 120_000);

    test('before the first byte a failure moves to the next deployment, then the fallback, on every format', async () => {
      reset();
      up.a.behaviour = 503;
      up.b.behaviour = 500;
      for (const { format, stream } of cases) {
        const before = { a: up.a.count('failover'), b: up.b.count('failover') };
        const answer = await ask(gw, key, format, 'pa/failover', stream, {}, `failover ${format} ${stream}`);
        expect(answer.text).toBe('hello from c');
        expect(answer.model).toBe('pc/dear');
        expect(answer.headers.get('x-gateway-model')).toBe('pc/dear');
        expect(answer.headers.get('x-gateway-provider')).toBe('pc');
        // Both deployments fail 3 times in a row and then cool down: the later calls skip them.
        const tried = up.a.count('failover') - before.a + (up.b.count('failover') - before.b);
        expect(Number(answer.headers.get('x-gateway-attempts'))).toBe(tried + 1);
      }
      // Priced at the served model: the record shows the fallback's price.
      const records = await api(gw, 'GET', '/v1/tasks?category=llm&model=pc/dear&page_size=100', { key });
      const costs = records.body.data.map((t: { cost: number }) => t.cost);
      expect(costs.length).toBeGreaterThanOrEqual(cases.length);
      for (const c of costs) expect(c).toBeCloseTo(costAt(dear), 10);
    }, 60_000);

    test('a stream that answers 200 and fails at once still fails over, on every format', async () => {
      reset();
      up.a.behaviour = 'sse-error';
      for (const format of FORMATS) {
        const answer = await ask(gw, key, format, 'pa/at-once', true, {}, `at once ${format}`);
        expect(answer.text).toBe('hello from b');
        expect(answer.headers.get('x-gateway-provider')).toBe('pb');
        expect(answer.model).toBe('pa/at-once');
      }
      // The first three calls tried pa (and cooled it down), so it was asked exactly three times.
      expect(up.a.count('at-once')).toBe(3);
    });

    test('x-gateway-fallbacks replaces the list for one request', async () => {
      reset();
      up.a.behaviour = 500;
      const answer = await ask(gw, key, 'chat', 'pa/override', false, { 'x-gateway-fallbacks': 'pd/other' });
      expect(answer.headers.get('x-gateway-model')).toBe('pd/other');
      expect(answer.model).toBe('pd/other');
      const before = up.c.count('dear');
      const none = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-gateway-fallbacks': '' },
        body: JSON.stringify({ model: 'pa/override', messages: [{ role: 'user', content: 'x' }] }),
      });
      expect(none.status).toBe(502);
      expect(none.headers.get('x-gateway-attempts')).toBe('1');
      expect(up.c.count('dear')).toBe(before);
      const bad = await fetch(`${gw.url}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json', 'x-gateway-fallbacks': 'nope/none' },
        body: JSON.stringify({ model: 'pa/override', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }),
      });
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { error: { message: string } }).error.message).toContain('x-gateway-fallbacks');
    });

    test("a key's allow-list bounds the plan: fallbacks it may not use are left out, and one named in the header is refused", async () => {
      reset();
      up.a.behaviour = 500;
      const acct = await createAccount(gw, uniqueEmail('routing-kept'), 10);
      const made = await api(gw, 'POST', '/v1/keys', {
        key: acct.key,
        body: { name: 'kept', models: ['pa/kept', 'pd/other'] },
      });
      expect(made.status).toBe(200);
      const kept = made.body.data.key as string;
      const call = (apiKey: string, headers: Record<string, string> = {}) =>
        fetch(`${gw.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', ...headers },
          body: JSON.stringify({ model: 'pa/kept', messages: [{ role: 'user', content: 'x' }] }),
        });
      const dearBefore = up.c.count('dear');
      // The configured fallback (pc/dear) is not this key's: its plan is pa/kept alone.
      const alone = await call(kept);
      expect(alone.status).toBe(502);
      expect(alone.headers.get('x-gateway-attempts')).toBe('1');
      const named = await call(kept, { 'x-gateway-fallbacks': 'pc/dear' });
      expect(named.status).toBe(403);
      const body = (await named.json()) as { error: { code: string; message: string; param: string } };
      expect(body.error.code).toBe('model_not_allowed');
      expect(body.error.param).toBe('x-gateway-fallbacks');
      expect(up.c.count('dear')).toBe(dearBefore);
      // A fallback the key may use is served; the account's unrestricted key falls back as configured.
      const other = await ask(gw, kept, 'chat', 'pa/kept', false, { 'x-gateway-fallbacks': 'pd/other' });
      expect(other.headers.get('x-gateway-model')).toBe('pd/other');
      const open = await ask(gw, key, 'chat', 'pa/kept', false);
      expect(open.headers.get('x-gateway-model')).toBe('pc/dear');
    });

    test('client errors from the upstream are returned, never failed over', async () => {
      reset();
      const fallbackCalls = up.c.count('dear');
      // What the client sees: the upstream's 400/404 as they are; our own credentials refused is a 502.
      const seen: Record<number, number> = { 400: 400, 401: 502, 403: 502, 404: 404, 413: 400, 422: 400 };
      for (const status of [400, 401, 403, 404, 413, 422]) {
        up.a.behaviour = status;
        up.b.behaviour = status;
        const before = up.a.count('client-error') + up.b.count('client-error');
        const res = await fetch(`${gw.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'pa/client-error', messages: [{ role: 'user', content: 'x' }] }),
        });
        expect(res.status).toBe(seen[status] as number);
        expect(res.headers.get('x-gateway-attempts')).toBe('1');
        expect(up.a.count('client-error') + up.b.count('client-error') - before).toBe(1);
      }
      expect(up.c.count('dear')).toBe(fallbackCalls);
    });

    test("an upstream's 429 reaches the client with the upstream's retry-after, in each format", async () => {
      reset();
      up.a.behaviour = 429;
      for (const [path, body] of [
        ['/v1/chat/completions', { model: 'pa/limited', messages: [{ role: 'user', content: 'x' }] }],
        ['/v1/messages', { model: 'pa/limited', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }],
      ] as const) {
        const res = await api(gw, 'POST', path, { key, body });
        expect(res.status).toBe(429);
        expect(res.headers.get('retry-after')).toBe('7');
      }
      up.a.behaviour = 'ok';
    });

    test("one request too large for an organisation's rate limit tries the next deployment, cools nothing, and is the client's 400 when none takes it", async () => {
      reset();
      up.a.behaviour = 'too-large';
      up.b.behaviour = 'too-large';
      const fallbackCalls = up.c.count('dear');
      // Another organisation (the fallback's) takes it.
      const served = await api(gw, 'POST', '/v1/chat/completions', {
        key,
        body: { model: 'pa/big', messages: [{ role: 'user', content: 'a very long prompt' }] },
      });
      expect(served.status).toBe(200);
      expect(served.headers.get('x-gateway-model')).toBe('pc/dear');
      expect(up.c.count('dear')).toBe(fallbackCalls + 1);
      // None takes it: the client's 400 with the upstream's words, each deployment asked once.
      up.c.behaviour = 'too-large';
      for (let i = 0; i < 4; i++) {
        const res = await api(gw, 'POST', '/v1/chat/completions', {
          key,
          body: { model: 'pa/big', messages: [{ role: 'user', content: 'a very long prompt' }] },
        });
        expect(res.status).toBe(400);
        expect(res.body.error.message).toStartWith('Request too large for');
        expect(res.headers.get('x-gateway-attempts')).toBe('3');
      }
      // Nothing was cooled for everyone else.
      const ready = await api(gw, 'GET', '/readyz');
      for (const d of ready.body.deployments['pa/big'])
        expect(d).toMatchObject({ state: 'ok', consecutive_failures: 0 });
      up.a.behaviour = 'ok';
      up.b.behaviour = 'ok';
      up.c.behaviour = 'ok';
    });

    test('every deployment cooling down: the least recently failed one is still tried', async () => {
      reset();
      up.a.behaviour = 500;
      for (let i = 0; i < 5; i++) {
        const before = up.a.count('lonely');
        const res = await api(gw, 'POST', '/v1/chat/completions', {
          key,
          body: { model: 'pa/lonely', messages: [{ role: 'user', content: 'x' }] },
        });
        expect(res.status).toBe(502);
        expect(up.a.count('lonely')).toBe(before + 1);
      }
      const ready = await api(gw, 'GET', '/readyz');
      expect(ready.body.deployments['pa/lonely'][0].state).toBe('cooling_down');
      // The same for any key (the dashboard's models page reads it), but for the upstream's error text.
      const routing = await api(gw, 'GET', '/v1/routing', { key });
      expect(routing.status).toBe(200);
      const [lonely] = routing.body.data.models['pa/lonely'];
      expect(lonely).toMatchObject({ provider: 'pa', upstream_model: 'lonely', state: 'cooling_down' });
      // The upstream's own words are the operator's (/readyz), not every tenant's.
      expect(lonely.last_error).toBeUndefined();
      expect(ready.body.deployments['pa/lonely'][0].last_error).toContain('500');
      expect(lonely.consecutive_failures).toBeGreaterThanOrEqual(3);
      expect(Date.parse(lonely.cooling_down_until)).toBeGreaterThan(Date.now());
      expect(routing.body.data.models['pa/weighted'].map((d: { weight: number }) => d.weight)).toEqual([3, 1]);
      expect((await api(gw, 'GET', '/v1/routing')).status).toBe(401);
    });

    test('a stalled upstream stream ends with the error event after stream_idle_timeout_ms', async () => {
      reset();
      up.a.behaviour = 'stall';
      const started = Date.now();
      await expect(ask(gw, key, 'chat', 'pa/idle', true)).rejects.toThrow(/sent nothing for 700 ms/);
      const elapsed = Date.now() - started;
      expect(elapsed).toBeGreaterThanOrEqual(650);
      expect(elapsed).toBeLessThan(5_000);
      await expect(ask(gw, key, 'messages', 'pa/idle', true)).rejects.toThrow(/sent nothing/);
    });

    test('exact cache: a miss then a hit on every format, streamed or not, priced at zero', async () => {
      reset();
      for (const { format, stream } of cases) {
        const prompt = `cache ${format} ${stream} ${Date.now()}`;
        const headers = { 'x-gateway-cache': 'ttl=60' };
        const before = up.a.count('cached');
        const first = await ask(gw, key, format, 'pa/cached', stream, headers, prompt);
        expect(first.headers.get('x-gateway-cache')).toBe('miss');
        await Bun.sleep(50); // a stream is stored once it has ended
        const second = await ask(gw, key, format, 'pa/cached', stream, headers, prompt);
        expect(second.headers.get('x-gateway-cache')).toBe('hit');
        // Its charge: the first call's figure was repeated.
        expect(Number(first.headers.get('x-gateway-cost-usd'))).toBeGreaterThan(0);
        expect(second.headers.get('x-gateway-cost-usd')).toBe('0');
        expect(second.text).toBe(first.text);
        expect(second.text).toBe('hello from a');
        expect(second.model).toBe('pa/cached');
        expect(up.a.count('cached')).toBe(before + 1);
        // no-store bypasses it.
        const third = await ask(gw, key, format, 'pa/cached', stream, { 'x-gateway-cache': 'no-store' }, prompt);
        expect(third.headers.get('x-gateway-cache')).toBeNull();
        expect(up.a.count('cached')).toBe(before + 2);
      }
      const records = await api(gw, 'GET', '/v1/tasks?category=llm&model=pa/cached&page_size=100', { key });
      const costs = records.body.data.map((t: { cost: number }) => t.cost).sort();
      expect(costs.filter((c: number) => c === 0)).toHaveLength(cases.length);
      // What the decoder keeps beside the request shapes the answer too: a Responses call asking
      // to be stored, and a chat stream asking for its usage chunk, were answered a copy that was
      // never stored, or had no usage chunk.
      const cached = { 'x-gateway-cache': 'ttl=60' };
      const input = `stored or not ${Date.now()}`;
      const responses = (store: boolean) =>
        api(gw, 'POST', '/v1/responses', { key, headers: cached, body: { model: 'pa/cached', input, store } });
      const unstored = await responses(false);
      expect(unstored.headers.get('x-gateway-cache')).toBe('miss');
      const stored = await responses(true);
      expect(stored.headers.get('x-gateway-cache')).toBe('miss');
      expect((await api(gw, 'GET', `/v1/responses/${stored.body.id}`, { key })).status).toBe(200);
      const usageChunks = async (includeUsage: boolean, prompt: string) => {
        const res = await fetch(`${gw.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...cached },
          body: JSON.stringify({
            model: 'pa/cached',
            stream: true,
            messages: [{ role: 'user', content: prompt }],
            ...(includeUsage ? { stream_options: { include_usage: true } } : {}),
          }),
        });
        const text = await res.text();
        return { cache: res.headers.get('x-gateway-cache'), usage: (text.match(/"choices":\[\],/g) ?? []).length };
      };
      const prompt = `usage chunk ${Date.now()}`;
      expect(await usageChunks(false, prompt)).toEqual({ cache: 'miss', usage: 0 });
      await Bun.sleep(50);
      expect(await usageChunks(true, prompt)).toEqual({ cache: 'miss', usage: 1 });
      await Bun.sleep(50);
      expect(await usageChunks(true, prompt)).toEqual({ cache: 'hit', usage: 1 });
      const bad = await api(gw, 'POST', '/v1/chat/completions', {
        key,
        headers: { 'x-gateway-cache': 'ttl=soon' },
        body: { model: 'pa/cached', messages: [{ role: 'user', content: 'x' }] },
      });
      expect(bad.status).toBe(400);
      expect(bad.body.error.message).toContain('x-gateway-cache');
    });
  });
}

describe('routing across two instances sharing Postgres and Redis', () => {
  const up = {
    a: startSwitchableUpstream('a'),
    b: startSwitchableUpstream('b'),
    c: startSwitchableUpstream('c'),
    d: startSwitchableUpstream('d'),
  };
  const running: GatewayProcess[] = [];
  afterAll(async () => {
    await Promise.all(running.map((g) => g.stop()));
    for (const u of Object.values(up)) u.stop();
  });

  test('a cooldown seen by one instance is honoured by the other, and both see the recovery; the cache is shared', async () => {
    const databaseUrl = await createTestDatabase('routing2');
    const dir = await mkdtemp(join(tmpdir(), 'gw-routing2-'));
    const env = {
      DATABASE_URL: databaseUrl,
      REDIS_URL,
      REDIS_KEY_PREFIX: `${new URL(databaseUrl).pathname.slice(1)}:`,
      GATEWAY_CONFIG: await writeConfig(dir, up),
    };
    const [one, two] = await Promise.all([startGateway(env), startGateway(env)]);
    running.push(one, two);
    const { key } = await createAccount(one, uniqueEmail('routing2'));

    up.a.behaviour = 500;
    for (let i = 0; i < 3; i++) {
      const answer = await ask(one, key, 'chat', 'pa/cooldown', false);
      expect(answer.headers.get('x-gateway-attempts')).toBe('2');
    }
    const triedOnOne = up.a.count('cooldown');
    expect(triedOnOne).toBe(3);
    await until(async () => {
      const ready = await api(two, 'GET', '/readyz');
      expect(ready.body.deployments['pa/cooldown'][0].state).toBe('cooling_down');
    });
    const skipped = await ask(two, key, 'chat', 'pa/cooldown', false);
    expect(skipped.headers.get('x-gateway-provider')).toBe('pc');
    expect(skipped.headers.get('x-gateway-attempts')).toBe('1');
    expect(up.a.count('cooldown')).toBe(triedOnOne);

    // Recovery: once the cooldown (2 s) has passed the deployment is tried again and serves.
    up.a.behaviour = 'ok';
    await Bun.sleep(2_100);
    const back = await ask(two, key, 'chat', 'pa/cooldown', false);
    expect(back.headers.get('x-gateway-provider')).toBe('pa');
    await until(async () => {
      const ready = await api(one, 'GET', '/readyz');
      expect(ready.body.deployments['pa/cooldown'][0].state).toBe('ok');
    });

    // The exact cache is in the shared store: stored by one instance, served by the other.
    for (const { format, stream } of cases) {
      const prompt = `shared ${format} ${stream} ${Date.now()}`;
      const headers = { 'x-gateway-cache': 'ttl=60' };
      const before = up.a.count('cached');
      const miss = await ask(one, key, format, 'pa/cached', stream, headers, prompt);
      expect(miss.headers.get('x-gateway-cache')).toBe('miss');
      await Bun.sleep(50);
      const hit = await ask(two, key, format, 'pa/cached', stream, headers, prompt);
      expect(hit.headers.get('x-gateway-cache')).toBe('hit');
      expect(hit.text).toBe(miss.text);
      expect(up.a.count('cached')).toBe(before + 1);
    }
  }, 60_000);
});

describe('routing config at start-up', () => {
  test('a deployment on a missing provider, or a fallback to a missing model, stops start-up naming the path', async () => {
    const refused = async (models: unknown[]) => {
      const dir = await mkdtemp(join(tmpdir(), 'gw-routing-bad-'));
      const path = join(dir, 'gateway.json');
      const providers = [{ id: 'pa', kind: 'openai', base_url: 'http://127.0.0.1:9/v1', api_key: 'k' }];
      await writeFile(path, JSON.stringify({ providers, models }));
      const gw = await startGateway({ DATA_DIR: dir, GATEWAY_CONFIG: path }, { waitReady: false });
      const code = await gw.proc.exited;
      await Bun.sleep(20);
      return { code, output: gw.output() };
    };
    const llm = (extra: object) => ({
      id: 'pa/x',
      category: 'llm',
      display_name: 'x',
      pricing: { input_per_mtok: 1, output_per_mtok: 1 },
      ...extra,
    });
    const missingProvider = await refused([llm({ deployments: [{ provider: 'nowhere' }] })]);
    expect(missingProvider.code).toBe(1);
    expect(missingProvider.output).toContain('models[0].deployments[0].provider: provider "nowhere" is not declared');
    const missingModel = await refused([llm({ fallbacks: ['pa/none'] })]);
    expect(missingModel.code).toBe(1);
    expect(missingModel.output).toContain('models[0].fallbacks[0]: model "pa/none" is not declared in models');
  });
});

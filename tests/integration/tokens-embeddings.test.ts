import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { api, createAccount, uniqueEmail } from '../helpers/api.ts';
import { eventually, startFakeLlmUpstream, type FakeLlmUpstream } from '../helpers/fake-llm-upstream.ts';
import {
  FAKE_COUNT_TOKENS,
  FAKE_EMBED_DIMENSIONS,
  FAKE_EMBED_TOKENS_PER_INPUT,
  fakeVector,
} from '../helpers/fake-token-endpoints.ts';
import { MODES, startGateway, type GatewayProcess } from '../helpers/gateway-process.ts';
import { rejection } from '../helpers/rejection.ts';
import { serverTimingOf } from '../helpers/server-timing.ts';

/**
 * `POST /v1/messages/count_tokens` and `POST /v1/embeddings` through the official SDKs, against
 * the sandbox and against fake upstreams over real HTTP (what each upstream received is asserted),
 * with the money checked to the 1e-10 USD: embeddings charged as category `embedding`,
 * count_tokens free.
 */

const SANDBOX_EMBED_PER_MTOK = 0.02;
const FAKE_EMBED_PER_MTOK = 0.13;
const usd = (tokens: number, perMtok: number) => Math.round(((tokens * perMtok) / 1e6) * 1e10) / 1e10;
const norm = (v: ArrayLike<number>) => Math.hypot(...Array.from(v));
const words = (text: string) => text.split(/\s+/).filter(Boolean).length;
const f32 = (v: number[]) => Array.from(Float32Array.from(v));

let oai: FakeLlmUpstream;
let ant: FakeLlmUpstream;
let configPath: string;

beforeAll(async () => {
  oai = await startFakeLlmUpstream('openai', { apiKey: 'sk-fake-oai-embed' });
  ant = await startFakeLlmUpstream('anthropic', { apiKey: 'sk-ant-fake-count' });
  const llm = (id: string, upstream: string) => ({
    id,
    category: 'llm',
    upstream_model: upstream,
    display_name: id,
    context_length: 100000,
    max_output: 4096,
    pricing: { input_per_mtok: 1, output_per_mtok: 2 },
  });
  const embed = (id: string, upstream: string) => ({
    id,
    category: 'embedding',
    upstream_model: upstream,
    display_name: id,
    pricing: { input_per_mtok: FAKE_EMBED_PER_MTOK },
  });
  const config = {
    rate_limit_per_minute: 100000,
    providers: [
      { id: 'sandbox', kind: 'sandbox' },
      { id: 'fakeoai', kind: 'openai', base_url: oai.baseUrl, api_key: oai.apiKey, max_retries: 0 },
      { id: 'fakeant', kind: 'anthropic', base_url: ant.baseUrl, api_key: ant.apiKey, max_retries: 0 },
    ],
    models: [
      llm('sandbox/echo', 'echo'),
      {
        id: 'sandbox/embed',
        category: 'embedding',
        display_name: 'Sandbox Embed',
        pricing: { input_per_mtok: SANDBOX_EMBED_PER_MTOK },
      },
      llm('fakeant/claude', 'up-text'),
      llm('fakeant/broken', 'up-always-500'),
      llm('fakeoai/gpt', 'up-text'),
      embed('fakeoai/embed', 'up-text'),
      embed('fakeoai/embed-500', 'up-always-500'),
      embed('fakeoai/embed-garbage', 'up-garbage'),
    ],
  };
  configPath = join(await mkdtemp(join(tmpdir(), 'gw-tokens-')), 'gateway.json');
  await writeFile(configPath, JSON.stringify(config));
}, 30_000);

afterAll(async () => {
  await oai?.stop();
  await ant?.stop();
});

for (const mode of MODES) {
  describe(`count_tokens and embeddings [${mode.name}]`, () => {
    let gw: GatewayProcess;
    let key: string;
    let openai: OpenAI;
    let anthropic: Anthropic;
    const balance = async (k = key) =>
      (await api(gw, 'GET', '/v1/account', { key: k })).body.data.balance_usd as number;

    beforeAll(async () => {
      gw = await startGateway({ ...(await mode.env('tokens')), GATEWAY_CONFIG: configPath, LOG_LEVEL: 'warn' });
      ({ key } = await createAccount(gw, uniqueEmail('tokens'), 1));
      openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
      anthropic = new Anthropic({ baseURL: gw.url, apiKey: key, maxRetries: 0 });
    }, 60_000);
    afterAll(async () => {
      await gw?.stop();
    });

    test('GET /v1/models?category=embedding lists the embedding models only', async () => {
      const list = await openai.models.list({ query: { category: 'embedding' } });
      const ids = list.data.map((m) => m.id).sort();
      expect(ids).toEqual(['fakeoai/embed', 'fakeoai/embed-500', 'fakeoai/embed-garbage', 'sandbox/embed']);
      const res = await api(gw, 'GET', '/v1/models?category=embedding,llm', { key });
      expect(res.body.data.map((m: { category: string }) => m.category)).toContain('llm');
      const doc = await api(gw, 'GET', '/openapi.json');
      expect(doc.body.paths['/v1/embeddings'].post.requestBody).toBeDefined();
      expect(doc.body.paths['/v1/messages/count_tokens'].post.responses['200']).toBeDefined();
    });

    test('count_tokens on sandbox/echo: its whitespace count, the same as a Messages call reports; free', async () => {
      const before = await balance();
      const params = {
        model: 'sandbox/echo',
        system: 'answer in one short line',
        messages: [
          { role: 'user' as const, content: 'how many tokens are in here?' },
          { role: 'assistant' as const, content: 'a few' },
          { role: 'user' as const, content: [{ type: 'text' as const, text: 'count   them\tall' }] },
        ],
      };
      const counted = await anthropic.messages.countTokens(params);
      expect(counted).toEqual({
        input_tokens: words('answer in one short line how many tokens are in here? a few count them all'),
      });
      expect(await balance()).toBe(before);
      const message = await anthropic.messages.create({ ...params, max_tokens: 16 });
      expect(counted.input_tokens).toBe(message.usage.input_tokens);
    });

    test('count_tokens on an Anthropic model is forwarded to its count_tokens endpoint', async () => {
      const before = await balance();
      const marker = `count-${mode.name}-${Date.now()}`;
      const counted = await anthropic.messages.countTokens({
        model: 'fakeant/claude',
        system: 'be brief',
        messages: [{ role: 'user', content: `tokens? ${marker}` }],
        tools: [{ name: 'lookup', input_schema: { type: 'object', properties: { q: { type: 'string' } } } }],
      });
      expect(counted.input_tokens).toBe(FAKE_COUNT_TOKENS);
      const [sent] = ant.find(marker);
      expect(sent?.path).toBe('/v1/messages/count_tokens');
      expect(sent?.headers['x-api-key']).toBe(ant.apiKey);
      expect(sent?.headers['anthropic-version']).toBeTruthy();
      // The client's own body, as a Messages call to Anthropic sends it.
      expect(sent?.body).toEqual({
        model: 'up-text',
        system: 'be brief',
        messages: [{ role: 'user', content: `tokens? ${marker}` }],
        tools: [{ name: 'lookup', input_schema: { type: 'object', properties: { q: { type: 'string' } } } }],
      });
      expect(await balance()).toBe(before);
      // What a translation would drop is counted as written; what the gateway withholds is told.
      const rich = `count-rich-${mode.name}-${Date.now()}`;
      const pdf = { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQK' } };
      const messages = [{ role: 'user', content: [pdf, { type: 'text', text: `summarise ${rich}` }] }];
      const tools = [{ type: 'web_search_20250305', name: 'web_search', max_uses: 2 }];
      const thinking = { type: 'enabled', budget_tokens: 2048 };
      const res = await api(gw, 'POST', '/v1/messages/count_tokens', {
        key,
        body: {
          model: 'fakeant/claude',
          messages,
          tools,
          thinking,
          cache_control: { type: 'ephemeral' },
          speed: 'fast',
        },
      });
      expect(res.status).toBe(200);
      const [richSent] = ant.find(rich);
      expect(richSent?.body).toEqual({
        model: 'up-text',
        messages,
        tools,
        thinking,
        cache_control: { type: 'ephemeral' },
      });
      const warned = JSON.parse(res.headers.get('x-gateway-warnings') ?? '[]');
      expect(warned.map((w: any) => w.field)).toEqual(['speed']);
      // A file of the operator's upstream account is refused here too.
      const file = await api(gw, 'POST', '/v1/messages/count_tokens', {
        key,
        body: {
          model: 'fakeant/claude',
          messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'file', file_id: 'file_1' } }] }],
        },
      });
      expect(file.status).toBe(400);
      expect(file.body.error.message).toContain('messages[0].content[0].source.type');
      // Nothing was recorded either: counting is not a call.
      const tasks = await api(gw, 'GET', '/v1/tasks?model=fakeant/claude', { key });
      expect(tasks.body.data).toEqual([]);
    });

    test('count_tokens elsewhere: counted by the gateway with o200k_base, upstream untouched', async () => {
      const seen = oai.requests.length;
      const text = 'héllo wörld, count me';
      const counted = await anthropic.messages.countTokens({
        model: 'fakeoai/gpt',
        messages: [{ role: 'user', content: text }],
      });
      // The text's o200k_base tokens plus OpenAI's chat framing (3 per message, 3 to prime the reply).
      expect(counted.input_tokens).toBe(countTokens(text) + 6);
      expect(counted.input_tokens).toBeLessThan(Buffer.byteLength(text));
      expect(oai.requests.length).toBe(seen);
    });

    test('count_tokens errors come in Anthropic shape, naming the field', async () => {
      const missing = await rejection(
        anthropic.messages.countTokens({ model: 'nobody/none', messages: [{ role: 'user', content: 'x' }] }),
      );
      expect(missing).toBeInstanceOf(Anthropic.NotFoundError);
      const wrong = await rejection(
        anthropic.messages.countTokens({ model: 'sandbox/embed', messages: [{ role: 'user', content: 'x' }] }),
      );
      expect(wrong).toBeInstanceOf(Anthropic.BadRequestError);
      expect((wrong as InstanceType<typeof Anthropic.BadRequestError>).message).toMatch(/model/);
      const raw = await api(gw, 'POST', '/v1/messages/count_tokens', {
        headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01' },
        body: { model: 'sandbox/echo', messages: [{ role: 'robot', content: 'x' }] },
      });
      expect(raw.status).toBe(400);
      expect(raw.body).toEqual({
        type: 'error',
        error: { type: 'invalid_request_error', message: expect.stringContaining('messages[0].role') },
      });
      const unauthenticated = await api(gw, 'POST', '/v1/messages/count_tokens', {
        headers: { 'x-api-key': 'gw_wrong' },
        body: { model: 'sandbox/echo', messages: [] },
      });
      expect(unauthenticated.status).toBe(401);
      expect(unauthenticated.body.type).toBe('error');
      const broken = await rejection(
        anthropic.messages.countTokens({ model: 'fakeant/broken', messages: [{ role: 'user', content: 'x' }] }),
      );
      expect(broken).toBeInstanceOf(Anthropic.InternalServerError);
    });

    test('sandbox/embed: float and base64 (SDK default) agree, deterministic, unit length, dimensions; charged exactly', async () => {
      const before = await balance();
      const input = ['the quick brown fox', 'jumps over', 'the quick brown fox'];
      const float = await openai.embeddings.create({ model: 'sandbox/embed', input, encoding_format: 'float' });
      expect(float.model).toBe('sandbox/embed');
      expect(float.data.map((d) => d.index)).toEqual([0, 1, 2]);
      expect(float.data[0]?.embedding).toEqual(float.data[2]?.embedding as number[]);
      expect(float.data[0]?.embedding).not.toEqual(float.data[1]?.embedding as number[]);
      for (const d of float.data) expect(Math.abs(norm(d.embedding) - 1)).toBeLessThan(1e-6);
      const tokens = input.reduce((n, t) => n + words(t), 0);
      expect(float.usage).toEqual({ prompt_tokens: tokens, total_tokens: tokens });

      // No encoding_format: the SDK asks for base64 and decodes it to the same floats.
      const decoded = await openai.embeddings.create({ model: 'sandbox/embed', input });
      expect(decoded.data.map((d) => d.embedding)).toEqual(float.data.map((d) => d.embedding));
      const b64 = await openai.embeddings.create({
        model: 'sandbox/embed',
        input: input[0] as string,
        encoding_format: 'base64',
      });
      const raw = b64.data[0]?.embedding as unknown as string;
      expect(typeof raw).toBe('string');
      expect(Array.from(new Float32Array(Buffer.from(raw, 'base64').buffer.slice(0)))).toEqual(
        float.data[0]?.embedding as number[],
      );

      const short = await openai.embeddings.create({
        model: 'sandbox/embed',
        input: input[0] as string,
        dimensions: 16,
      });
      expect(short.data[0]?.embedding).toHaveLength(16);
      expect(Math.abs(norm(short.data[0]?.embedding ?? []) - 1)).toBeLessThan(1e-6);
      const { data: tokenIds, response: tokenIdsAnswer } = await openai.embeddings
        .create({ model: 'sandbox/embed', input: [[5, 6, 7]] })
        .withResponse();
      expect(tokenIds.usage.prompt_tokens).toBe(3);
      // The answer names its charge, as an LLM answer does.
      expect(Number(tokenIdsAnswer.headers.get('x-gateway-cost-usd'))).toBeCloseTo(usd(3, SANDBOX_EMBED_PER_MTOK), 12);
      // A plain decimal, never exponent form (3 tokens at $0.02 per million).
      expect(tokenIdsAnswer.headers.get('x-gateway-cost-usd')).toBe('0.00000006');

      const charged = [tokens, tokens, words(input[0] as string), words(input[0] as string), 3];
      const expected = charged.reduce((sum, n) => sum + usd(n, SANDBOX_EMBED_PER_MTOK), 0);
      expect(before - (await balance())).toBeCloseTo(expected, 10);
      const tasks = await api(gw, 'GET', '/v1/tasks?category=embedding&model=sandbox/embed&page_size=100', { key });
      expect(tasks.body.data).toHaveLength(charged.length);
      for (const task of tasks.body.data) {
        expect(task).toMatchObject({ category: 'embedding', status: 'completed', model: 'sandbox/embed' });
      }
      const costs = tasks.body.data.map((t: { cost: number }) => t.cost).sort();
      expect(costs).toEqual(charged.map((n) => usd(n, SANDBOX_EMBED_PER_MTOK)).sort());
      const spend = await api(gw, 'GET', '/v1/account/spend?days=1', { key });
      expect(spend.body.data[0].embedding).toBeCloseTo(expected, 10);
    });

    test('an OpenAI-compatible upstream: forwarded to /embeddings, vectors re-encoded, its usage charged', async () => {
      const before = await balance();
      const marker = `embed-${mode.name}-${Date.now()}`;
      const input = [`first ${marker}`, `second ${marker}`];
      const float = await openai.embeddings.create({
        model: 'fakeoai/embed',
        input,
        dimensions: 4,
        encoding_format: 'float',
        user: 'end-user-7',
      });
      const [sent] = oai.find(marker);
      expect(sent?.path).toBe('/v1/embeddings');
      expect(sent?.headers.authorization).toBe(`Bearer ${oai.apiKey}`);
      expect(sent?.body).toEqual({
        model: 'up-text',
        input,
        encoding_format: 'float',
        dimensions: 4,
        user: 'end-user-7',
      });
      expect(float.model).toBe('fakeoai/embed');
      expect(float.data.map((d) => d.embedding)).toEqual([f32(fakeVector(0, 4)), f32(fakeVector(1, 4))]);
      expect(float.usage.prompt_tokens).toBe(2 * FAKE_EMBED_TOKENS_PER_INPUT);

      const started = performance.now();
      const { data: b64, response } = await openai.embeddings
        .create({ model: 'fakeoai/embed', input: [`third ${marker}`] })
        .withResponse();
      const elapsed = performance.now() - started;
      expect(b64.data[0]?.embedding).toEqual(f32(fakeVector(0, FAKE_EMBED_DIMENSIONS)));
      // Where its time went (docs/observability.md): three parts, adding up to no more than the client saw.
      const parts = serverTimingOf(response.headers);
      expect(Object.keys(parts)).toEqual(['gateway', 'upstream', 'settle']);
      expect(Object.values(parts).reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(elapsed + 1);
      expect(oai.find(marker)[1]?.body.encoding_format).toBe('float');

      const expected =
        usd(2 * FAKE_EMBED_TOKENS_PER_INPUT, FAKE_EMBED_PER_MTOK) +
        usd(FAKE_EMBED_TOKENS_PER_INPUT, FAKE_EMBED_PER_MTOK);
      expect(before - (await balance())).toBeCloseTo(expected, 10);
      const tasks = await api(gw, 'GET', '/v1/tasks?category=embedding&model=fakeoai/embed', { key });
      expect(tasks.body.data.map((t: { cost: number }) => t.cost).sort()).toEqual(
        [
          usd(2 * FAKE_EMBED_TOKENS_PER_INPUT, FAKE_EMBED_PER_MTOK),
          usd(FAKE_EMBED_TOKENS_PER_INPUT, FAKE_EMBED_PER_MTOK),
        ].sort(),
      );
    });

    test('embeddings errors in OpenAI shape naming the field; failures are free', async () => {
      const before = await balance();
      const missing = await rejection(openai.embeddings.create({ model: 'nobody/none', input: 'x' }));
      expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
      expect((missing as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('model_not_found');
      const llm = await rejection(openai.embeddings.create({ model: 'sandbox/echo', input: 'x' }));
      expect(llm).toBeInstanceOf(OpenAI.BadRequestError);
      expect((llm as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('model');
      const empty = await rejection(openai.embeddings.create({ model: 'sandbox/embed', input: ['a', ''] }));
      expect((empty as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('input[1]');
      const dims = await rejection(openai.embeddings.create({ model: 'sandbox/embed', input: 'a', dimensions: 5000 }));
      expect(dims).toBeInstanceOf(OpenAI.BadRequestError);
      expect((dims as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('dimensions');
      const raw = await api(gw, 'POST', '/v1/embeddings', { key, body: { model: 'sandbox/embed', input: [1.5] } });
      expect(raw.status).toBe(400);
      expect(raw.body.error).toMatchObject({ type: 'invalid_request_error', param: 'input[0]' });

      // The chat endpoints and the tasks endpoint point at /v1/embeddings.
      const chat = await rejection(
        openai.chat.completions.create({ model: 'sandbox/embed', messages: [{ role: 'user', content: 'hi' }] }),
      );
      expect(chat).toBeInstanceOf(OpenAI.BadRequestError);
      expect((chat as Error).message).toMatch(/\/v1\/embeddings/);
      const task = await api(gw, 'POST', '/v1/tasks', { key, body: { model: 'sandbox/embed', input: {} } });
      expect(task.status).toBe(422);
      expect(task.body.data.message).toMatch(/\/v1\/embeddings/);

      const upstream500 = await rejection(openai.embeddings.create({ model: 'fakeoai/embed-500', input: 'x' }));
      expect(upstream500).toBeInstanceOf(OpenAI.InternalServerError);
      const garbage = await rejection(openai.embeddings.create({ model: 'fakeoai/embed-garbage', input: 'x' }));
      expect((garbage as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
      expect(await balance()).toBe(before);
      // Failed calls are recorded after the error is answered (nothing to charge, nothing to wait for).
      const failed = await eventually(async () => {
        const res = await api(gw, 'GET', '/v1/tasks?category=embedding&status=failed', { key });
        return res.body.data.length >= 2 ? res.body.data : undefined;
      });
      expect(failed.map((t: { model: string; cost: number }) => [t.model, t.cost]).sort()).toEqual([
        ['fakeoai/embed-500', 0],
        ['fakeoai/embed-garbage', 0],
      ]);
    });

    test('a balance below the worst case is a 402 before any upstream call', async () => {
      const { key: poor } = await createAccount(gw, uniqueEmail('poor'), 0);
      const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: poor, maxRetries: 0 });
      const marker = `poor-${mode.name}-${Date.now()}`;
      const err = await rejection(client.embeddings.create({ model: 'fakeoai/embed', input: marker }));
      expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
      expect((err as InstanceType<typeof OpenAI.APIError>).code).toBe('insufficient_balance');
      expect(oai.find(marker)).toEqual([]);
    });
  });
}

describe('embedding models in the config file', () => {
  const refused = async (models: object[]) => {
    const dir = await mkdtemp(join(tmpdir(), 'gw-embed-config-'));
    const path = join(dir, 'gateway.json');
    await writeFile(
      path,
      JSON.stringify({
        providers: [
          { id: 'ant', kind: 'anthropic', api_key: 'k' },
          { id: 'oai', kind: 'openai', api_key: 'k' },
        ],
        models,
      }),
    );
    const gw = await startGateway({ DATA_DIR: dir, GATEWAY_CONFIG: path }, { waitReady: false });
    const code = await gw.proc.exited;
    await Bun.sleep(20);
    return { code, output: gw.output() };
  };

  test('need an input price and a provider that serves embeddings, or start-up stops naming the model', async () => {
    const unpriced = await refused([{ id: 'oai/e', category: 'embedding', display_name: 'E' }]);
    expect(unpriced.code).toBe(1);
    expect(unpriced.output).toContain('models[0].pricing: embedding models need input_per_mtok');
    const anthropic = await refused([
      { id: 'ant/e', category: 'embedding', display_name: 'E', pricing: { input_per_mtok: 0.1 } },
    ]);
    expect(anthropic.code).toBe(1);
    expect(anthropic.output).toContain('ant/e: provider ant (kind anthropic) cannot serve embeddings');
  });
});

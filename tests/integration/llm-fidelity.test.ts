import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { api, createAccount, uniqueEmail } from '../helpers/api.ts';
import { eventually } from '../helpers/fake-llm-upstream.ts';
import { startFixtureLlmUpstream, type FixtureLlmUpstream } from '../helpers/fixture-llm-upstream.ts';
import { MODES, startGateway, type GatewayProcess } from '../helpers/gateway-process.ts';
import { rawEvents, truthOf, type FixtureKind, type Raw, type Truth } from '../helpers/recorded-truth.ts';

/**
 * Protocol fidelity end to end: recorded upstream traffic replayed through the gateway to the
 * official SDKs on all three client formats (cached tokens, reasoning, tool calls without
 * arguments or without `index`), prices of cache reads and writes, and `cache_control` marks and
 * thinking signatures reaching an Anthropic upstream as the client wrote them.
 */

const FIXTURES = resolve(import.meta.dir, '../fixtures');
/** Per million tokens; cache reads and writes have prices of their own. */
const PRICING = { input_per_mtok: 3, output_per_mtok: 15, cache_read_per_mtok: 0.3, cache_write_per_mtok: 3.75 };

/** Fixtures by upstream dialect: recorded from the real APIs, then documentation-built endings. */
const REPLAYS: Array<{ fixture: string; kind: FixtureKind }> = [
  { fixture: 'recorded/anthropic-text', kind: 'anthropic' },
  { fixture: 'recorded/anthropic-tool-no-args', kind: 'anthropic' },
  { fixture: 'recorded/anthropic-thinking', kind: 'anthropic' },
  { fixture: 'recorded/anthropic-cache-usage', kind: 'anthropic' },
  { fixture: 'anthropic-messages/parallel-tool-calls', kind: 'anthropic' },
  { fixture: 'anthropic-messages/max-tokens', kind: 'anthropic' },
  { fixture: 'anthropic-messages/stop-sequence', kind: 'anthropic' },
  { fixture: 'recorded/mistral-tool-call-no-index', kind: 'chat' },
  { fixture: 'recorded/compat-tool-call-cached', kind: 'chat' },
  { fixture: 'recorded/xai-text', kind: 'chat' },
  { fixture: 'recorded/xai-reasoning-tool-call', kind: 'chat' },
  { fixture: 'chat-completions/parallel-tool-calls', kind: 'chat' },
  { fixture: 'chat-completions/length', kind: 'chat' },
  { fixture: 'chat-completions/refusal', kind: 'chat' },
];
const providerOf = (kind: FixtureKind) => (kind === 'anthropic' ? 'recant' : 'recoai');
const modelOf = (fixture: string, kind: FixtureKind) => `${providerOf(kind)}/${fixture.replace('/', '.')}`;

type Client = 'chat' | 'responses' | 'messages';
const CLIENTS: Client[] = ['chat', 'responses', 'messages'];

/** What a client saw, in common terms. */
interface Seen {
  text: string;
  reasoning: string;
  signatures: string[];
  tools: Array<{ name: string; args: string }>;
  input: number;
  cacheRead: number;
  cacheWrite?: number;
}

async function streamChat(openai: OpenAI, model: string): Promise<Seen> {
  // The SDK's stream helper: it throws on a tool-call delta without `index`.
  const stream = openai.chat.completions.stream({
    model,
    messages: [{ role: 'user', content: 'replay' }],
    stream_options: { include_usage: true },
  });
  let reasoning = '';
  stream.on('chunk', (chunk) => {
    const delta = chunk.choices[0]?.delta as { reasoning_content?: string } | undefined;
    reasoning += delta?.reasoning_content ?? '';
  });
  const done = await stream.finalChatCompletion();
  const message = done.choices[0]?.message;
  return {
    text: (message?.content ?? '') + (message?.refusal ?? ''),
    reasoning,
    signatures: [],
    tools: (message?.tool_calls ?? []).flatMap((c) =>
      c.type === 'function' ? [{ name: c.function.name, args: c.function.arguments }] : [],
    ),
    input: done.usage?.prompt_tokens ?? -1,
    cacheRead: done.usage?.prompt_tokens_details?.cached_tokens ?? 0,
  };
}

async function streamResponses(openai: OpenAI, model: string): Promise<Seen> {
  const done = await openai.responses.stream({ model, input: 'replay' }).finalResponse();
  const items = done.output as Raw[];
  return {
    text: done.output_text,
    reasoning: items
      .filter((i) => i.type === 'reasoning')
      .flatMap((i) => (i.content ?? []).map((c: Raw) => c.text))
      .join(''),
    signatures: items
      .filter((i) => i.type === 'reasoning' && i.encrypted_content?.startsWith('sig:'))
      .map((i) => i.encrypted_content.slice(4)),
    tools: items.filter((i) => i.type === 'function_call').map((i) => ({ name: i.name, args: i.arguments })),
    input: done.usage?.input_tokens ?? -1,
    cacheRead: done.usage?.input_tokens_details.cached_tokens ?? -1,
  };
}

async function streamMessages(anthropic: Anthropic, model: string): Promise<Seen> {
  const done = await anthropic.messages
    .stream({ model, max_tokens: 1024, messages: [{ role: 'user', content: 'replay' }] })
    .finalMessage();
  const blocks = done.content;
  const u = done.usage;
  return {
    text: blocks.map((b) => (b.type === 'text' ? b.text : '')).join(''),
    reasoning: blocks.map((b) => (b.type === 'thinking' ? b.thinking : '')).join(''),
    signatures: blocks.flatMap((b) => (b.type === 'thinking' && b.signature ? [b.signature] : [])),
    tools: blocks.flatMap((b) => (b.type === 'tool_use' ? [{ name: b.name, args: JSON.stringify(b.input) }] : [])),
    input: u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0),
    cacheRead: u.cache_read_input_tokens ?? 0,
    cacheWrite: u.cache_creation_input_tokens ?? 0,
  };
}

/** Runs every case, then fails once listing every failing one. */
async function matrix<T>(cases: T[], label: (c: T) => string, run: (c: T) => Promise<void>): Promise<void> {
  const results = await Promise.allSettled(cases.map(run));
  const failures = results.flatMap((r, i) =>
    r.status === 'rejected' ? [`- ${label(cases[i] as T)}: ${String((r.reason as Error)?.message ?? r.reason)}`] : [],
  );
  if (failures.length) throw new Error(`${failures.length}/${cases.length} cases failed:\n${failures.join('\n')}`);
}

/** The USD a usage costs at PRICING, computed here from the figures alone. */
const priced = (t: Truth, output: number) =>
  ((t.input - t.cacheRead - t.cacheWrite) * PRICING.input_per_mtok +
    t.cacheRead * PRICING.cache_read_per_mtok +
    t.cacheWrite * PRICING.cache_write_per_mtok +
    output * PRICING.output_per_mtok) /
  1e6;

let upstream: FixtureLlmUpstream;
let configPath: string;

beforeAll(async () => {
  upstream = startFixtureLlmUpstream();
  const provider = (id: string, kind: string) => ({ id, kind, base_url: upstream.baseUrl, api_key: 'sk-fixture' });
  const model = (fixture: string, kind: FixtureKind) => ({
    id: modelOf(fixture, kind),
    category: 'llm',
    upstream_model: fixture,
    display_name: fixture,
    context_length: 200000,
    max_output: 8192,
    pricing: PRICING,
  });
  const extra = [
    { fixture: 'recorded/anthropic-thinking-tool-call', kind: 'anthropic' as const },
    { fixture: 'chat-completions/response-text', kind: 'chat' as const },
  ];
  const config = {
    rate_limit_per_minute: 100000,
    providers: [provider('recant', 'anthropic'), provider('recoai', 'openai')],
    models: [...REPLAYS, ...extra].map((r) => model(r.fixture, r.kind)),
  };
  configPath = join(await mkdtemp(join(tmpdir(), 'gw-llm-fidelity-')), 'gateway.json');
  await writeFile(configPath, JSON.stringify(config, null, 2));
});

afterAll(async () => {
  await upstream?.stop();
});

for (const mode of MODES) {
  describe(`protocol fidelity [${mode.name}]`, () => {
    let gw: GatewayProcess;
    let key: string;
    let openai: OpenAI;
    let anthropic: Anthropic;

    beforeAll(async () => {
      gw = await startGateway({ ...(await mode.env('llmfidelity')), GATEWAY_CONFIG: configPath, LOG_LEVEL: 'warn' });
      ({ key } = await createAccount(gw, uniqueEmail('fidelity'), 50));
      openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
      anthropic = new Anthropic({ baseURL: gw.url, apiKey: key, maxRetries: 0 });
    }, 60_000);
    afterAll(async () => {
      await gw?.stop();
    });

    test('every replayed stream reaches every SDK whole: text, reasoning, signatures, JSON arguments, cached tokens', async () => {
      const cases = REPLAYS.flatMap((r) => CLIENTS.map((client) => ({ ...r, client })));
      await matrix(
        cases,
        (c) => `${c.fixture} → ${c.client}`,
        async ({ fixture, kind, client }) => {
          const truth = truthOf(kind, await rawEvents(`${FIXTURES}/${fixture}.sse`));
          const model = modelOf(fixture, kind);
          const seen =
            client === 'chat'
              ? await streamChat(openai, model)
              : client === 'responses'
                ? await streamResponses(openai, model)
                : await streamMessages(anthropic, model);
          expect(seen.text).toBe(truth.text);
          expect(seen.tools.map((t) => t.name)).toEqual(truth.toolNames);
          for (const tool of seen.tools) expect(() => JSON.parse(tool.args)).not.toThrow();
          expect(seen.input).toBe(truth.input);
          expect(seen.cacheRead).toBe(truth.cacheRead);
          if (seen.cacheWrite !== undefined) expect(seen.cacheWrite).toBe(truth.cacheWrite);
          // Chat clients get reasoning as `reasoning_content`, Responses as reasoning items, Messages as thinking.
          expect(seen.reasoning).toBe(truth.reasoning);
          if (client !== 'chat') expect(seen.signatures).toEqual(truth.signatures);
        },
      );
    }, 120_000);

    test('cache reads and writes are priced at their own rates on every client format', async () => {
      const cases: Array<{ fixture: string; kind: FixtureKind }> = [
        { fixture: 'recorded/anthropic-cache-usage', kind: 'anthropic' },
        { fixture: 'recorded/compat-tool-call-cached', kind: 'chat' },
      ];
      for (const { fixture, kind } of cases) {
        const acct = await createAccount(gw, uniqueEmail('fidelity-cost'), 5);
        const truth = truthOf(kind, await rawEvents(`${FIXTURES}/${fixture}.sse`));
        expect(truth.cacheRead).toBeGreaterThan(0);
        if (kind === 'anthropic') expect(truth.cacheWrite).toBeGreaterThan(0);
        const model = modelOf(fixture, kind);
        const oa = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: acct.key, maxRetries: 0 });
        const an = new Anthropic({ baseURL: gw.url, apiKey: acct.key, maxRetries: 0 });
        await streamChat(oa, model);
        await streamResponses(oa, model);
        await streamMessages(an, model);
        const expected = priced(truth, truth.output);
        // The price differs from pricing every input token alike: caching is visible in the bill.
        expect(Math.abs(expected - (truth.input * 3 + truth.output * 15) / 1e6)).toBeGreaterThan(1e-5);
        const tasks = await eventually(async () => {
          const res = await api(gw, 'GET', '/v1/tasks?category=llm&page_size=10', { key: acct.key });
          return res.body?.data?.length === 3 ? (res.body.data as Raw[]) : undefined;
        }, 5_000);
        expect(tasks?.map((t) => t.cost)).toEqual([
          expect.closeTo(expected, 9),
          expect.closeTo(expected, 9),
          expect.closeTo(expected, 9),
        ]);
        const balance = (await api(gw, 'GET', '/v1/account', { key: acct.key })).body?.data?.balance_usd;
        expect(balance).toBeCloseTo(5 - 3 * expected, 9);
      }
    }, 60_000);

    test('messages in, Anthropic out: cache_control marks and thinking signatures reach the upstream as written; the answer keeps its thinking', async () => {
      const marker = `[cache-${mode.name}-${Date.now()}]`;
      const ephemeral = { type: 'ephemeral' } as const;
      const signature = 'EqQBCgIYAhIMsig+/==';
      const body = {
        model: modelOf('recorded/anthropic-thinking-tool-call', 'anthropic'),
        max_tokens: 4096,
        thinking: { type: 'enabled', budget_tokens: 2048 } as const,
        system: [
          { type: 'text', text: `You are terse. ${marker}` },
          { type: 'text', text: 'Long shared context.', cache_control: { type: 'ephemeral', ttl: '1h' } },
        ],
        tools: [
          { name: 'lookup', input_schema: { type: 'object', properties: {} } },
          { name: 'checkSandboxErrors', input_schema: { type: 'object' }, cache_control: ephemeral },
        ],
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'First question.', cache_control: ephemeral },
              {
                type: 'image',
                source: { type: 'url', url: 'https://images.example.com/a.png' },
                cache_control: ephemeral,
              },
            ],
          },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'I should look it up.', signature },
              {
                type: 'redacted_thinking',
                data: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj2pLmN0kF8eGx',
              },
              { type: 'tool_use', id: 'toolu_01', name: 'lookup', input: {}, cache_control: ephemeral },
            ],
          },
          {
            role: 'user',
            content: [
              {
                type: 'tool_result',
                tool_use_id: 'toolu_01',
                content: [{ type: 'text', text: 'found' }],
                cache_control: ephemeral,
              },
            ],
          },
        ],
      };
      const res = await api(gw, 'POST', '/v1/messages', {
        key,
        body,
        headers: { 'anthropic-version': '2023-06-01' },
      });
      expect(res.status).toBe(200);
      const [sent] = upstream.find(marker);
      expect(sent?.path).toBe('/v1/messages');
      expect(sent?.body.system).toEqual(body.system);
      expect(sent?.body.tools.map((t: Raw) => t.cache_control)).toEqual([undefined, ephemeral]);
      expect(sent?.body.messages).toEqual(body.messages);
      expect(sent?.body.thinking).toEqual(body.thinking);
      // The non-streamed answer keeps the upstream's thinking block, signature and all.
      const recorded = await Bun.file(`${FIXTURES}/recorded/anthropic-thinking-tool-call.json`).json();
      expect(res.body.content[0]).toEqual(recorded.content[0]);
      expect(res.body.content[1]).toMatchObject({ type: 'tool_use', name: 'checkSandboxErrors', input: {} });
      expect(res.body.usage).toMatchObject({
        input_tokens: 599,
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
      });
    });

    test('chat and Responses clients reach Anthropic with their cache marks and reasoning, and get reasoning back', async () => {
      const model = modelOf('recorded/anthropic-thinking-tool-call', 'anthropic');
      const marker = `[chat-cache-${mode.name}-${Date.now()}]`;
      const chat = await openai.chat.completions.create({
        model,
        reasoning_effort: 'medium',
        messages: [
          {
            role: 'system',
            content: [{ type: 'text', text: `Rules ${marker}`, cache_control: { type: 'ephemeral' } }],
          },
          { role: 'user', content: [{ type: 'text', text: 'go', cache_control: { type: 'ephemeral', ttl: '5m' } }] },
        ] as never,
      });
      const [sent] = upstream.find(marker);
      expect(sent?.body.system).toEqual([
        { type: 'text', text: `Rules ${marker}`, cache_control: { type: 'ephemeral' } },
      ]);
      expect(sent?.body.messages[0].content).toEqual([
        { type: 'text', text: 'go', cache_control: { type: 'ephemeral', ttl: '5m' } },
      ]);
      // reasoning_effort medium → the effort table's 8192-token budget, under a raised max_tokens.
      expect(sent?.body.thinking).toEqual({ type: 'enabled', budget_tokens: 8192 });
      expect(sent?.body.max_tokens).toBeGreaterThan(8192);
      const message = chat.choices[0]?.message as Raw;
      expect(message.reasoning_content).toBe('The user wants me to call checkSandboxErrors immediately.');
      expect(message.tool_calls[0].function.arguments).toBe('{}');

      const first = await openai.responses.create({ model, input: `Start ${marker}-r`, reasoning: { effort: 'low' } });
      const reasoning = first.output.find((i) => i.type === 'reasoning') as Raw;
      const call = first.output.find((i) => i.type === 'function_call') as Raw;
      expect(reasoning.encrypted_content).toMatch(/^sig:Eq4C/);
      expect(call.arguments).toBe('{}');
      // The next turn sends the reasoning item back: Anthropic gets the thinking block, signature unchanged.
      await openai.responses.create({
        model,
        store: false,
        input: [
          { role: 'user', content: `Start ${marker}-r2` },
          reasoning,
          call,
          { type: 'function_call_output', call_id: call.call_id, output: 'no errors' },
        ],
      });
      const [second] = upstream.find(`${marker}-r2`);
      const assistant = second?.body.messages.find((m: Raw) => m.role === 'assistant');
      const recorded = await Bun.file(`${FIXTURES}/recorded/anthropic-thinking-tool-call.json`).json();
      expect(assistant.content[0]).toEqual(recorded.content[0]);
      expect(assistant.content[1]).toMatchObject({ type: 'tool_use', id: call.call_id, input: {} });
    });

    test('lossy mappings are told: cache marks and a thinking budget toward an OpenAI-compatible upstream', async () => {
      const marker = `[lossy-${mode.name}-${Date.now()}]`;
      const res = await api(gw, 'POST', '/v1/messages', {
        key,
        headers: { 'anthropic-version': '2023-06-01' },
        body: {
          model: modelOf('chat-completions/response-text', 'chat'),
          max_tokens: 4096,
          thinking: { type: 'enabled', budget_tokens: 3000 },
          system: [{ type: 'text', text: `ctx ${marker}`, cache_control: { type: 'ephemeral' } }],
          messages: [{ role: 'user', content: 'hi' }],
        },
      });
      expect(res.status).toBe(200);
      const [sent] = upstream.find(marker);
      expect(sent?.path).toBe('/v1/chat/completions');
      expect(sent?.body.reasoning_effort).toBe('low');
      expect(JSON.stringify(sent?.body)).not.toContain('cache_control');
      const warnings = JSON.parse(res.headers.get('x-gateway-warnings') ?? '[]') as Raw[];
      expect(warnings.map((w) => [w.type, w.field])).toEqual([
        ['changed-value', 'reasoning_effort'],
        ['unsupported-setting', 'cache_control'],
      ]);
    });
  });
}

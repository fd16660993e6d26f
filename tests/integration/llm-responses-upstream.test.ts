import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { api, createAccount, expectBalance, expectCallsCharged, uniqueEmail } from '../helpers/api.ts';
import {
  FAKE_INPUT_TOKENS,
  FULL_TEXT,
  TEXT_DELTAS,
  eventually,
  scenarioModel,
  startFakeLlmUpstream,
  type FakeLlmUpstream,
  type Scenario,
} from '../helpers/fake-llm-upstream.ts';
import {
  REASONING_SUMMARY,
  startFakeResponsesUpstream,
  type FakeResponsesUpstream,
  type ResponsesRecord,
} from '../helpers/fake-responses-upstream.ts';
import { MODES, startGateway, type GatewayProcess } from '../helpers/gateway-process.ts';

/**
 * `kind: openai-responses`: an upstream speaking the Responses API, reached from all three client
 * formats with the official SDKs. Chat-completions and Messages clients are translated; a
 * Responses client is passed through (its unknown fields reach the upstream, the upstream's
 * unknown fields reach it) while the gateway keeps the conversation state itself.
 */

type Client = 'chat' | 'responses' | 'messages';
const CLIENTS: Client[] = ['chat', 'responses', 'messages'];
const PROVIDER = 'fakeresp';
const model = (scenario: Scenario | 'missing') => `${PROVIDER}/${scenario}`;
/** $1 in / $2 out per million tokens, as configured below. */
const cost = (input: number, output: number) => (input * 1 + output * 2) / 1_000_000;
/** USD per web search call on this file's models. */
const SEARCH_USD = 0.01;

const SCENARIOS_USED: Scenario[] = [
  'text',
  'web-search',
  'tools',
  'error-event',
  'garbage',
  'cut',
  'flaky-429',
  'always-500',
  'slow-stream',
];
const TOOL_SCHEMA = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };

let markerCount = 0;
const newMarker = (label: string) => `[${label}-${Date.now().toString(36)}-${markerCount++}]`;

async function matrix<T>(cases: T[], label: (c: T) => string, run: (c: T) => Promise<void>): Promise<void> {
  const results = await Promise.allSettled(cases.map(run));
  const failures = results.flatMap((r, i) =>
    r.status === 'rejected' ? [`- ${label(cases[i]!)}: ${String((r.reason as Error)?.message ?? r.reason)}`] : [],
  );
  if (failures.length) throw new Error(`${failures.length}/${cases.length} cases failed:\n${failures.join('\n')}`);
}
const pairs = <A, B>(as: A[], bs: B[]) => as.flatMap((a) => bs.map((b) => [a, b] as const));

function check(cond: unknown, message: string): asserts cond {
  if (!cond) throw new Error(message);
}

interface Outcome {
  id: string;
  text: string;
  finish: string | null | undefined;
  usage?: { input: number; output: number };
  model: string;
  toolCalls: Array<{ id: string; name: string; args: unknown }>;
  events: any[];
  final: any;
}

function body(client: Client, m: string, marker: string, extra: { maxTokens?: number; tools?: boolean } = {}): any {
  const defs = [
    { name: 'get_weather', description: 'Current weather in a city' },
    { name: 'get_time', description: 'Local time in a city' },
  ];
  const content = `Tell me something. ${marker}`;
  if (client === 'chat')
    return {
      model: m,
      messages: [{ role: 'user', content }],
      ...(extra.maxTokens ? { max_tokens: extra.maxTokens } : {}),
      ...(extra.tools
        ? { tools: defs.map((d) => ({ type: 'function', function: { ...d, parameters: TOOL_SCHEMA } })) }
        : {}),
    };
  if (client === 'responses')
    return {
      model: m,
      input: [{ role: 'user', content }],
      ...(extra.maxTokens ? { max_output_tokens: extra.maxTokens } : {}),
      ...(extra.tools
        ? { tools: defs.map((d) => ({ type: 'function', ...d, parameters: TOOL_SCHEMA, strict: false })) }
        : {}),
    };
  return {
    model: m,
    max_tokens: extra.maxTokens ?? 1000,
    messages: [{ role: 'user', content }],
    ...(extra.tools ? { tools: defs.map((d) => ({ ...d, input_schema: TOOL_SCHEMA })) } : {}),
  };
}

function chatOutcome(res: OpenAI.ChatCompletion, events: any[] = []): Outcome {
  const msg = res.choices[0]?.message;
  return {
    id: res.id,
    text: msg?.content ?? '',
    finish: res.choices[0]?.finish_reason,
    usage: res.usage ? { input: res.usage.prompt_tokens, output: res.usage.completion_tokens } : undefined,
    model: res.model,
    toolCalls: (msg?.tool_calls ?? []).map((tc: any) => ({
      id: tc.id,
      name: tc.function.name,
      args: JSON.parse(tc.function.arguments),
    })),
    events,
    final: res,
  };
}

function responsesOutcome(res: OpenAI.Responses.Response, events: any[] = []): Outcome {
  return {
    id: res.id,
    text: res.output_text,
    finish: res.status === 'incomplete' ? `incomplete:${res.incomplete_details?.reason}` : res.status,
    usage: res.usage ? { input: res.usage.input_tokens, output: res.usage.output_tokens } : undefined,
    model: res.model,
    toolCalls: res.output.flatMap((item: any) =>
      item.type === 'function_call' ? [{ id: item.call_id, name: item.name, args: JSON.parse(item.arguments) }] : [],
    ),
    events,
    final: res,
  };
}

function messagesOutcome(res: Anthropic.Message, events: any[] = []): Outcome {
  return {
    id: res.id,
    text: res.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join(''),
    finish: res.stop_reason,
    usage: { input: res.usage.input_tokens, output: res.usage.output_tokens },
    model: res.model,
    toolCalls: res.content.flatMap((b) => (b.type === 'tool_use' ? [{ id: b.id, name: b.name, args: b.input }] : [])),
    events,
    final: res,
  };
}

interface Clients {
  openai: OpenAI;
  anthropic: Anthropic;
}

/** One call through the SDKs' own helpers: `chat.completions.stream`, `responses.stream`, `messages.stream`. */
async function call(c: Clients, client: Client, req: any, stream: boolean): Promise<Outcome> {
  if (!stream) {
    if (client === 'chat') return chatOutcome(await c.openai.chat.completions.create(req));
    if (client === 'responses') return responsesOutcome(await c.openai.responses.create(req));
    return messagesOutcome(await c.anthropic.messages.create(req));
  }
  const events: any[] = [];
  if (client === 'chat') {
    const s = c.openai.chat.completions.stream({ ...req, stream_options: { include_usage: true } });
    for await (const chunk of s) events.push(chunk);
    return chatOutcome(await s.finalChatCompletion(), events);
  }
  if (client === 'responses') {
    const s = c.openai.responses.stream(req);
    for await (const event of s) events.push(event);
    return responsesOutcome(await s.finalResponse(), events);
  }
  const s = c.anthropic.messages.stream(req);
  for await (const event of s) events.push(event);
  return messagesOutcome(await s.finalMessage(), events);
}

/** Models named anywhere in a stream (chunks, response snapshots, message_start). */
function streamModels(client: Client, events: any[]): string[] {
  if (client === 'chat') return events.map((e) => e.model);
  if (client === 'responses') return events.flatMap((e) => (e.response ? [e.response.model] : []));
  return events.flatMap((e) => (e.type === 'message_start' ? [e.message.model] : []));
}

const FINISH: Record<Client, { stop: string; length: string; tools: string }> = {
  chat: { stop: 'stop', length: 'length', tools: 'tool_calls' },
  responses: { stop: 'completed', length: 'incomplete:max_output_tokens', tools: 'completed' },
  messages: { stop: 'end_turn', length: 'max_tokens', tools: 'tool_use' },
};

let fake: FakeResponsesUpstream;
/** A chat-completions upstream, to continue conversations across providers. */
let chatFake: FakeLlmUpstream;
let configPath: string;

async function onlyRequest(marker: string): Promise<ResponsesRecord> {
  const found = await fake.waitFor(marker, 1, 2_000);
  check(found.length === 1, `upstream saw ${found.length} requests carrying ${marker}, expected 1`);
  return found[0]!;
}

const inputText = (item: any): string =>
  typeof item?.content === 'string' ? item.content : (item?.content ?? []).map((p: any) => p.text ?? '').join('');

beforeAll(async () => {
  fake = await startFakeResponsesUpstream({ apiKey: 'sk-fake-responses-0123' });
  chatFake = await startFakeLlmUpstream('openai', { apiKey: 'sk-fake-chat-0123' });
  // Web search and code containers are billed per call (docs/money.md); every model here prices them.
  const entry = (scenario: string) => {
    const base = scenarioModel(PROVIDER, scenario as Scenario, `Responses ${scenario}`);
    return { ...base, pricing: { ...base.pricing, per_tool_call: { web_search: SEARCH_USD, code_interpreter: 0.03 } } };
  };
  const config = {
    rate_limit_per_minute: 100000,
    providers: [
      {
        id: PROVIDER,
        kind: 'openai-responses',
        display_name: 'Fake Responses',
        base_url: fake.baseUrl,
        api_key: fake.apiKey,
        max_retries: 2,
        timeout_ms: 2000,
      },
      { id: 'fakechat', kind: 'openai', base_url: chatFake.baseUrl, api_key: chatFake.apiKey },
    ],
    models: [
      ...SCENARIOS_USED.map(entry),
      entry('missing'),
      { ...entry('text'), id: 'fakechat/text', display_name: 'Chat text' },
      { ...scenarioModel(PROVIDER, 'web-search', 'Unpriced search'), id: `${PROVIDER}/unpriced-search` },
    ],
  };
  configPath = join(await mkdtemp(join(tmpdir(), 'gw-responses-upstream-')), 'gateway.json');
  await writeFile(configPath, JSON.stringify(config, null, 2));
}, 30_000);

afterAll(async () => {
  await fake?.stop();
  await chatFake?.stop();
});

for (const mode of MODES) {
  describe(`kind openai-responses on all three client formats [${mode.name}]`, () => {
    let gw: GatewayProcess;
    let key: string;
    let c: Clients;
    const clientsFor = (apiKey: string): Clients => ({
      openai: new OpenAI({ baseURL: `${gw.url}/v1`, apiKey, maxRetries: 0 }),
      anthropic: new Anthropic({ baseURL: gw.url, apiKey, maxRetries: 0 }),
    });

    beforeAll(async () => {
      gw = await startGateway({ ...(await mode.env('llmresponses')), GATEWAY_CONFIG: configPath, LOG_LEVEL: 'warn' });
      ({ key } = await createAccount(gw, uniqueEmail('llmresp'), 50));
      c = clientsFor(key);
    }, 60_000);
    afterAll(async () => {
      await gw?.stop();
    }, 30_000);

    test('text, usage and the gateway model on every client, streamed and not; the upstream gets a Responses body', async () => {
      await matrix(
        pairs(CLIENTS, [false, true]),
        ([cl, st]) => `${cl} ${st ? 'stream' : 'json'}`,
        async ([client, stream]) => {
          const marker = newMarker('text');
          const out = await call(c, client, body(client, model('text'), marker), stream);
          expect(out.text).toBe(FULL_TEXT);
          expect(out.finish).toBe(FINISH[client].stop);
          expect(out.usage).toEqual({ input: FAKE_INPUT_TOKENS, output: TEXT_DELTAS.length });
          expect(out.model).toBe(model('text'));
          if (stream) {
            const models = streamModels(client, out.events);
            check(models.length > 0, 'the stream named no model');
            expect([...new Set(models)]).toEqual([model('text')]);
            expect(out.events.length).toBeGreaterThan(TEXT_DELTAS.length / 2);
          }
          const rec = await onlyRequest(marker);
          expect(rec.path).toBe('/v1/responses');
          expect(rec.headers.authorization).toBe(`Bearer ${fake.apiKey}`);
          expect(rec.body.model).toBe('up-text');
          expect(rec.body.stream === true).toBe(stream);
          expect(rec.body.store).toBe(false);
          expect(inputText(rec.body.input.at(-1))).toContain(marker);
          if (client === 'responses') {
            // The gateway's own id, not the upstream's; and the stored object is what the client got.
            expect(out.id.startsWith('resp_')).toBe(true);
            expect(out.final.x_fake_upstream).toEqual({ region: 'test-1' });
            const stored = await api(gw, 'GET', `/v1/responses/${out.id}`, { key });
            expect(stored.status).toBe(200);
            expect(stored.body).toMatchObject({
              id: out.id,
              model: model('text'),
              x_fake_upstream: { region: 'test-1' },
            });
            // Item ids too: an item_reference to what the client saw resolves.
            const items = (output: any[]) => output.map((i) => [i.id, i.type, i.content?.[0]?.text]);
            expect(items(stored.body.output)).toEqual(items(out.final.output));
          }
        },
      );
    });

    test("max_output_tokens reaches the upstream and ends with each format's length reason", async () => {
      await matrix(
        pairs(CLIENTS, [false, true]),
        ([cl, st]) => `${cl} ${st ? 'stream' : 'json'}`,
        async ([client, stream]) => {
          const marker = newMarker('len');
          const out = await call(c, client, body(client, model('text'), marker, { maxTokens: 16 }), stream);
          expect(out.text).toBe(TEXT_DELTAS.slice(0, 16).join(''));
          expect(out.finish).toBe(FINISH[client].length);
          expect(out.usage?.output).toBe(16);
          expect((await onlyRequest(marker)).body.max_output_tokens).toBe(16);
        },
      );
    });

    test("the upstream's reasoning summary reaches chat and Messages clients as their own reasoning, streamed or not", async () => {
      await matrix(
        pairs(['chat', 'messages'] as const, [false, true]),
        ([cl, st]) => `${cl} ${st ? 'stream' : 'json'}`,
        async ([client, stream]) => {
          const marker = newMarker('thinks');
          const res = await fetch(`${gw.url}/v1/${client === 'chat' ? 'chat/completions' : 'messages'}`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: JSON.stringify(
              client === 'chat'
                ? {
                    model: model('text'),
                    reasoning_effort: 'low',
                    stream,
                    messages: [{ role: 'user', content: marker }],
                  }
                : {
                    model: model('text'),
                    max_tokens: 4096,
                    thinking: { type: 'enabled', budget_tokens: 1024 },
                    stream,
                    messages: [{ role: 'user', content: marker }],
                  },
            ),
          });
          expect(res.status).toBe(200);
          expect((await onlyRequest(marker)).body.reasoning).toBeDefined();
          const text = await res.text();
          const reasoning = !stream
            ? client === 'chat'
              ? JSON.parse(text).choices[0].message.reasoning_content
              : JSON.parse(text).content.find((b: { type: string }) => b.type === 'thinking')?.thinking
            : text
                .split('\n')
                .filter((line) => line.startsWith('data: {'))
                .map((line) => JSON.parse(line.slice(6)))
                .map((e) =>
                  client === 'chat' ? (e.choices?.[0]?.delta?.reasoning_content ?? '') : (e.delta?.thinking ?? ''),
                )
                .join('');
          expect(reasoning).toBe(REASONING_SUMMARY.join(''));
        },
      );
    });

    test('what a translation toward Responses cannot carry is reported in x-gateway-warnings, never dropped silently', async () => {
      await matrix(
        ['chat', 'messages'] as Client[],
        (cl) => cl,
        async (client) => {
          const marker = newMarker('warn');
          const req = body(client, model('text'), marker, { maxTokens: 5 });
          if (client === 'chat') req.stop = ['lazy'];
          else req.stop_sequences = ['lazy'];
          const path = client === 'chat' ? '/v1/chat/completions' : '/v1/messages';
          const res = await api(gw, 'POST', path, { key, body: req });
          expect(res.status).toBe(200);
          const warnings = JSON.parse(res.headers.get('x-gateway-warnings') ?? '[]');
          expect(warnings.map((w: any) => w.field).sort()).toEqual(['max_output_tokens', 'stop']);
          const rec = await onlyRequest(marker);
          expect(rec.body.max_output_tokens).toBe(16);
          expect(rec.body.stop).toBeUndefined();
        },
      );
    });

    test('parallel tool calls, then their results in a follow-up turn', async () => {
      await matrix(
        pairs(CLIENTS, [false, true]),
        ([cl, st]) => `${cl} ${st ? 'stream' : 'json'}`,
        async ([client, stream]) => {
          const marker = newMarker('tools');
          const first = await call(c, client, body(client, model('tools'), marker, { tools: true }), stream);
          expect(first.finish).toBe(FINISH[client].tools);
          expect(first.toolCalls.map((t) => [t.name, t.args])).toEqual([
            ['get_weather', { city: 'Paris' }],
            ['get_time', { city: 'Tokyo' }],
          ]);
          check(first.toolCalls[0]!.id !== first.toolCalls[1]!.id, 'both tool calls have the same id');
          const rec = await onlyRequest(marker);
          expect(rec.body.tools.map((t: any) => [t.type, t.name, t.parameters])).toEqual([
            ['function', 'get_weather', TOOL_SCHEMA],
            ['function', 'get_time', TOOL_SCHEMA],
          ]);
          const results = ['18C', '09:00'];
          const next = body(client, model('tools'), marker, { tools: true });
          if (client === 'chat') {
            const msg = first.final.choices[0].message;
            next.messages.push({ role: 'assistant', content: msg.content, tool_calls: msg.tool_calls });
            next.messages.push(
              ...first.toolCalls.map((t, i) => ({ role: 'tool', tool_call_id: t.id, content: results[i] })),
            );
          } else if (client === 'responses') {
            next.input.push(...first.final.output);
            next.input.push(
              ...first.toolCalls.map((t, i) => ({ type: 'function_call_output', call_id: t.id, output: results[i] })),
            );
          } else {
            next.messages.push({ role: 'assistant', content: first.final.content });
            next.messages.push({
              role: 'user',
              content: first.toolCalls.map((t, i) => ({ type: 'tool_result', tool_use_id: t.id, content: results[i] })),
            });
          }
          const second = await call(c, client, next, stream);
          expect(second.text).toBe('Results: 18C | 09:00');
          expect(second.finish).toBe(FINISH[client].stop);
          const recs = await fake.waitFor(marker, 2, 2_000);
          const items = recs[1]!.body.input;
          const calls = items.filter((i: any) => i.type === 'function_call');
          expect(calls.map((i: any) => [i.name, JSON.parse(i.arguments)])).toEqual([
            ['get_weather', { city: 'Paris' }],
            ['get_time', { city: 'Tokyo' }],
          ]);
          const outputs = items.filter((i: any) => i.type === 'function_call_output');
          expect(outputs.map((i: any) => i.call_id)).toEqual(calls.map((i: any) => i.call_id));
          expect(outputs.map((i: any) => i.output)).toEqual(results);
        },
      );
    });

    test("a Responses client's unknown fields reach the upstream unchanged, and the upstream's reach the client", async () => {
      await matrix(
        [false, true],
        (st) => (st ? 'stream' : 'json'),
        async (stream) => {
          const marker = newMarker('unknown');
          const extras = {
            reasoning: { effort: 'low', summary: 'auto' },
            include: ['reasoning.encrypted_content'],
            truncation: 'auto',
            prompt_cache_key: 'cache-key-1',
            text: { format: { type: 'text' }, verbosity: 'low' },
            metadata: { team: 'search' },
            x_experimental: { nested: [1, 'two', null, { deep: true }], big: 12345678901234 },
            // Features the canonical request has no form for: the upstream's business, not refused.
            tools: [
              { type: 'web_search' },
              { type: 'mcp', server_label: 'docs', server_url: 'https://mcp.example.com' },
            ],
            tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'web_search' }] },
            // Web search is billed per call: the client's own bound on calls goes as it is.
            max_tool_calls: 4,
          };
          const req = {
            ...body('responses', model('text'), marker),
            ...extras,
            input: [
              {
                role: 'user',
                content: [
                  { type: 'input_text', text: `Tell me something. ${marker}` },
                  { type: 'input_file', filename: 'notes.pdf', file_data: 'data:application/pdf;base64,JVBERi0xLjQK' },
                ],
              },
            ],
          };
          let headers: Headers;
          const events: any[] = [];
          let final: any;
          if (stream) {
            const { data, response } = await c.openai.responses.create({ ...req, stream: true } as any).withResponse();
            headers = response.headers;
            for await (const event of data as unknown as AsyncIterable<any>) events.push(event);
            final = events.at(-1)?.response;
          } else {
            const { data, response } = await c.openai.responses.create(req as any).withResponse();
            headers = response.headers;
            final = data;
          }
          const rec = await onlyRequest(marker);
          const { model: _m, stream: _s, store, ...sent } = rec.body;
          const { model: _cm, ...asked } = req;
          expect(sent).toEqual(asked);
          expect(store).toBe(false);
          // Nothing was dropped, so nothing is reported as dropped.
          expect(headers.get('x-gateway-warnings')).toBeNull();
          // The reasoning item and the upstream's own fields come through as the upstream wrote them.
          expect(final.output[0]).toMatchObject({ type: 'reasoning', summary: [{ text: REASONING_SUMMARY.join('') }] });
          expect(final.output[1].content[0].text).toBe(FULL_TEXT);
          expect(final.x_fake_upstream).toEqual({ region: 'test-1' });
          expect(final.metadata).toEqual({ team: 'search' });
          // Sending the output back: the bare reasoning item cannot be used by a stateless upstream and
          // is left out with a warning; the other items go without their ids.
          const next = newMarker('back');
          const again = await c.openai.responses
            .create({
              model: model('text'),
              input: [...req.input, ...final.output, { role: 'user', content: next }],
              reasoning: { effort: 'low' },
            })
            .withResponse();
          expect(again.data.output_text).toBe(FULL_TEXT);
          const warned = JSON.parse(again.response.headers.get('x-gateway-warnings') ?? '[]');
          expect(warned.map((w: any) => [w.type, w.field])).toEqual([['unsupported-content', 'input[1]']]);
          const sentBack = (await onlyRequest(next)).body.input;
          expect(sentBack.map((i: any) => i.type ?? 'message')).toEqual(['message', 'message', 'message']);
          expect(sentBack.filter((i: any) => 'id' in i)).toEqual([]);
          if (stream) {
            const summary = events
              .filter((e) => e.type === 'response.reasoning_summary_text.delta')
              .map((e) => e.delta);
            expect(summary).toEqual(REASONING_SUMMARY);
            expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
          }
        },
      );
    });

    test('service_tier is withheld from a passed-through body, with a warning: the catalog prices every tier alike', async () => {
      for (const tier of ['priority', 'flex']) {
        const marker = newMarker('tier');
        const res = await api(gw, 'POST', '/v1/responses', {
          key,
          body: { model: model('text'), input: `tier ${marker}`, service_tier: tier, truncation: 'auto' },
        });
        expect(res.status).toBe(200);
        const sent = (await onlyRequest(marker)).body;
        expect(sent.service_tier).toBeUndefined();
        expect(sent.truncation).toBe('auto');
        const warnings = JSON.parse(res.headers.get('x-gateway-warnings') ?? '[]');
        expect(warnings.map((w: any) => [w.type, w.field])).toEqual([['unsupported-setting', 'service_tier']]);
      }
    });

    /** A short PDF beside a marked text, asked of the text model with `apiKey`: the file's cost is the upstream's to read. */
    const withFile = (apiKey: string, marker: string) => {
      const text = { type: 'input_text', text: `Summarise ${marker}` };
      const file = { type: 'input_file', filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0xLjQK' };
      const ask = (content: unknown[]) =>
        api(gw, 'POST', '/v1/responses', {
          key: apiKey,
          body: { model: model('text'), input: [{ role: 'user', content }], max_output_tokens: 100 },
        });
      return { text, file, ask };
    };

    test('what only the upstream reads is held too: a file part is refused on a balance that covers the text alone', async () => {
      const acct = await createAccount(gw, uniqueEmail('respfile'), 0.1);
      const marker = newMarker('file');
      const { text, file, ask } = withFile(acct.key, marker);
      // The file's pages may cost up to the model's context window (128,000 tokens at $1 per million).
      const refused = await ask([file, text]);
      expect(refused.status).toBe(402);
      expect(refused.body.error.code).toBe('insufficient_balance');
      expect(await fake.waitFor(marker, 1, 300)).toHaveLength(0);
      expect((await ask([text])).status).toBe(200);
      expect(await fake.waitFor(marker, 1, 2_000)).toHaveLength(1);
    });

    test("a key's tpm counts what only the upstream reads: a file part is estimated too", async () => {
      const acct = await createAccount(gw, uniqueEmail('resptpm'), 5);
      const made = await api(gw, 'POST', '/v1/keys', { key: acct.key, body: { name: 'tpm', tpm: 3_000 } });
      expect(made.status).toBe(200);
      const marker = newMarker('tpm');
      const { text, file, ask } = withFile(made.body.data.key, marker);
      // A file is estimated at 3,000 tokens (src/llm/input-estimate.ts): with the text and the
      // output asked for, more than the minute's 3,000.
      const refused = await ask([file, text]);
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe('key_tpm_exceeded');
      expect(await fake.waitFor(marker, 1, 300)).toHaveLength(0);
      expect((await ask([text])).status).toBe(200);
    });

    test("what names the operator's upstream storage is refused, naming the field, before the upstream sees it", async () => {
      const marker = newMarker('storage');
      const text = { type: 'input_text', text: `Look. ${marker}` };
      const ask = (extra: Record<string, unknown>, content: unknown[] = [text]) =>
        api(gw, 'POST', '/v1/responses', {
          key,
          body: { model: model('text'), input: [{ role: 'user', content }], ...extra },
        });
      const refusals: Array<[Promise<any>, string]> = [
        [ask({}, [text, { type: 'input_file', file_id: 'file-abc123' }]), 'input[0].content[1].file_id'],
        [ask({}, [text, { type: 'input_image', file_id: 'file-abc124' }]), 'input[0].content[1].file_id'],
        [ask({ tools: [{ type: 'file_search', vector_store_ids: ['vs_1'] }] }), 'tools[0].type'],
        [ask({ tools: [{ type: 'code_interpreter', container: 'cntr_1' }] }), 'tools[0].container'],
        [
          ask({ tools: [{ type: 'code_interpreter', container: { type: 'auto', file_ids: ['file-1'] } }] }),
          'tools[0].container.file_ids',
        ],
        [
          ask({ tools: [{ type: 'image_generation', input_image_mask: { file_id: 'file-mask1' } }] }),
          'tools[0].input_image_mask.file_id',
        ],
      ];
      for (const [pending, param] of refusals) {
        const res = await pending;
        expect(res.status).toBe(400);
        expect(res.body.error.param).toBe(param);
        expect(res.body.error.message).toContain("the gateway's own files");
      }
      expect(await fake.waitFor(marker, 1, 300)).toHaveLength(0);
      // A container the upstream makes for this call holds nothing of anyone's.
      expect((await ask({ tools: [{ type: 'code_interpreter', container: { type: 'auto' } }] })).status).toBe(200);
      expect(await fake.waitFor(marker, 1, 2_000)).toHaveLength(1);
    });

    test('web search calls are billed per call at the model’s price, held up to max_tool_calls, refused where unpriced', async () => {
      const acct = await createAccount(gw, uniqueEmail('respsearch'), 1);
      const cl = clientsFor(acct.key);
      const search = { tools: [{ type: 'web_search' as const }] };
      await matrix(
        [false, true],
        (st) => (st ? 'stream' : 'json'),
        async (stream) => {
          const marker = newMarker('search');
          const req = { ...body('responses', model('web-search'), marker), ...search };
          let final: any;
          let headers: Headers;
          if (stream) {
            const { data, response } = await cl.openai.responses.create({ ...req, stream: true } as any).withResponse();
            headers = response.headers;
            for await (const event of data as unknown as AsyncIterable<any>) final = event.response ?? final;
          } else {
            const { data, response } = await cl.openai.responses.create(req as any).withResponse();
            headers = response.headers;
            final = data;
          }
          expect(final.output.filter((i: any) => i.type === 'web_search_call')).toHaveLength(2);
          // No bound asked: the gateway set one upstream, and said so.
          expect((await onlyRequest(marker)).body.max_tool_calls).toBe(16);
          const warnings = JSON.parse(headers.get('x-gateway-warnings') ?? '[]');
          expect(warnings.map((w: any) => [w.type, w.field])).toEqual([['changed-value', 'max_tool_calls']]);
        },
      );
      await expectCallsCharged(gw, acct.key, {
        startUsd: 1,
        calls: 2,
        perCallUsd: cost(FAKE_INPUT_TOKENS, TEXT_DELTAS.length) + 2 * SEARCH_USD,
        builtInToolCalls: { web_search: 2 },
      });
      // The hold covers every call the response may make: 100 searches do not fit in what is left.
      const bounded = await api(gw, 'POST', '/v1/responses', {
        key: acct.key,
        body: { model: model('web-search'), input: 'hi', max_output_tokens: 16, max_tool_calls: 100, ...search },
      });
      expect(bounded.status).toBe(402);
      // A model that does not price web search does not get it.
      const unpriced = await api(gw, 'POST', '/v1/responses', {
        key: acct.key,
        body: { model: `${PROVIDER}/unpriced-search`, input: 'hi', ...search },
      });
      expect(unpriced.status).toBe(400);
      expect(unpriced.body.error.param).toBe('tools[0].type');
      expect(unpriced.body.error.message).toContain('pricing.per_tool_call.web_search');
    });

    test('the exact cache tells passed-through bodies apart by what only the upstream reads', async () => {
      const marker = newMarker('cache');
      const headers = { 'x-gateway-cache': 'ttl=60' };
      const ask = async (body: Record<string, unknown>) => {
        const res = await api(gw, 'POST', '/v1/responses', { key, headers, body });
        expect(res.status).toBe(200);
        return res.headers.get('x-gateway-cache');
      };
      const plain = { model: model('text'), input: `cache ${marker}`, max_output_tokens: 64 };
      expect(await ask({ ...plain, tools: [{ type: 'web_search' }] })).toBe('miss');
      // Without the built-in tool the canonical request is the same, but the upstream's is not.
      expect(await ask(plain)).toBe('miss');
      expect(await ask({ ...plain, x_experimental: { on: true } })).toBe('miss');
      // The same body, its keys in another order: the same call.
      expect(await ask({ max_output_tokens: 64, input: `cache ${marker}`, model: model('text') })).toBe('hit');
      expect(await ask({ x_experimental: { on: true }, ...plain })).toBe('hit');
      expect(await fake.waitFor(marker, 3, 2_000)).toHaveLength(3);
    });

    test('built-in tools are refused, naming the field, when the model is not passed through', async () => {
      const err = await c.openai.responses
        .create({ model: 'fakechat/text', input: 'hi', tools: [{ type: 'web_search' }] } as any)
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      check(err instanceof OpenAI.BadRequestError, `expected BadRequestError, got ${String(err)}`);
      expect((err as any).error?.param).toBe('tools[0].type');
    });

    test('previous_response_id and store are resolved by the gateway, never forwarded', async () => {
      await matrix(
        [false, true],
        (st) => (st ? 'stream' : 'json'),
        async (stream) => {
          const marker = newMarker('conv');
          const first = await call(c, 'responses', body('responses', model('text'), marker), stream);
          const next = newMarker('next');
          const second = await call(
            c,
            'responses',
            {
              model: model('text'),
              previous_response_id: first.id,
              input: `And then? ${next}`,
              instructions: 'Be brief.',
            },
            stream,
          );
          expect(second.text).toBe(FULL_TEXT);
          expect(second.final.previous_response_id).toBe(first.id);
          expect(second.final.store).toBe(true);
          const rec = await onlyRequest(next);
          expect(rec.body.previous_response_id).toBeUndefined();
          expect(rec.body.store).toBe(false);
          expect(rec.body.instructions).toBe('Be brief.');
          const turns = rec.body.input.map((i: any) => [i.role, inputText(i)]);
          expect(turns).toEqual([
            ['user', `Tell me something. ${marker}`],
            ['assistant', FULL_TEXT],
            ['user', `And then? ${next}`],
          ]);
          // A third turn continues the second: the whole conversation again.
          const third = newMarker('third');
          await call(c, 'responses', { model: model('text'), previous_response_id: second.id, input: third }, stream);
          expect((await onlyRequest(third)).body.input.map((i: any) => i.role)).toEqual([
            'user',
            'assistant',
            'user',
            'assistant',
            'user',
          ]);
          // store: false keeps nothing, at the upstream or the gateway.
          const unstored = await call(
            c,
            'responses',
            { ...body('responses', model('text'), newMarker('nostore')), store: false },
            stream,
          );
          expect(unstored.final.store).toBe(false);
          expect((await api(gw, 'GET', `/v1/responses/${unstored.id}`, { key })).status).toBe(404);
          const err = await c.openai.responses
            .create({ model: model('text'), previous_response_id: unstored.id, input: 'x' })
            .then(
              () => undefined,
              (e: unknown) => e,
            );
          check(err instanceof OpenAI.NotFoundError, `expected NotFoundError, got ${String(err)}`);
        },
      );
    });

    test('previous_response_id sends the earlier turns as the upstream saw them: a file part is sent again', async () => {
      const pdf = 'data:application/pdf;base64,JVBERi0xLjQKJcfsj6IK';
      const marker = newMarker('filed');
      const first = await api(gw, 'POST', '/v1/responses', {
        key,
        body: {
          model: model('text'),
          input: [
            {
              role: 'user',
              content: [
                { type: 'input_file', filename: 'contract.pdf', file_data: pdf },
                { type: 'input_text', text: `Summarise this contract ${marker}` },
              ],
            },
          ],
        },
      });
      expect(first.status).toBe(200);
      const next = newMarker('clause');
      const second = await api(gw, 'POST', '/v1/responses', {
        key,
        body: { model: model('text'), previous_response_id: first.body.id, input: `And clause 7? ${next}` },
      });
      expect(second.status).toBe(200);
      const sent = (await onlyRequest(next)).body.input as any[];
      expect(sent.map((i) => i.role)).toEqual(['user', 'assistant', 'user']);
      expect(sent[0].content[0]).toEqual({ type: 'input_file', filename: 'contract.pdf', file_data: pdf });
      expect(inputText(sent[1])).toBe(FULL_TEXT);
      // No echoed ids: the upstream stores nothing to look them up in.
      expect(sent.some((i) => 'id' in i)).toBe(false);
    });

    test('a conversation continues across providers: chat upstream then Responses upstream, and back', async () => {
      const first = newMarker('cross1');
      const onChat = await c.openai.responses.create({ model: 'fakechat/text', input: first });
      const second = newMarker('cross2');
      const onResp = await c.openai.responses.create({
        model: model('text'),
        previous_response_id: onChat.id,
        input: second,
      });
      expect(onResp.output_text).toBe(FULL_TEXT);
      expect((await onlyRequest(second)).body.input.map((i: any) => [i.role, inputText(i)])).toEqual([
        ['user', first],
        ['assistant', FULL_TEXT],
        ['user', second],
      ]);
      const third = newMarker('cross3');
      await c.openai.responses.create({ model: 'fakechat/text', previous_response_id: onResp.id, input: third });
      const [rec] = await chatFake.waitFor(third, 1, 2_000);
      expect(rec?.body.messages.map((m: any) => [m.role, inputText(m)])).toEqual([
        ['user', first],
        ['assistant', FULL_TEXT],
        ['user', second],
        ['assistant', FULL_TEXT],
        ['user', third],
      ]);
    });

    test('an item_reference to an item of a passed-through response (upstream item ids) resolves to that item', async () => {
      await matrix(
        [false, true],
        (st) => (st ? 'stream' : 'json'),
        async (stream) => {
          const first = await call(c, 'responses', body('responses', model('text'), newMarker('ref')), stream);
          const item = first.final.output[0];
          const next = newMarker('refnext');
          const out = await call(
            c,
            'responses',
            {
              model: model('text'),
              input: [
                { type: 'item_reference', id: item.id },
                { role: 'user', content: next },
              ],
            },
            stream,
          );
          expect(out.text).toBe(FULL_TEXT);
          const sent = (await onlyRequest(next)).body.input;
          // The stored item's content, without the id a stateless upstream would try to look up.
          expect(sent[0]).toMatchObject({ type: 'message', role: 'assistant' });
          expect(sent[0].id).toBeUndefined();
          expect(inputText(sent[0])).toBe(FULL_TEXT);
        },
      );
    });

    test('NUL and lone surrogates in fields the gateway does not know reach the upstream as sent; the call is stored', async () => {
      const marker = newMarker('hostile');
      const hostile = 'a\u0000b\ud800c';
      const res = await api(gw, 'POST', '/v1/responses', {
        key,
        body: { ...body('responses', model('text'), marker), x_note: hostile, metadata: { note: 'ok' } },
      });
      expect(res.status).toBe(200);
      const rec = await onlyRequest(marker);
      expect(rec.body.x_note).toBe(hostile);
      expect((await api(gw, 'GET', `/v1/responses/${res.body.id}`, { key })).status).toBe(200);
    });

    test('streams are relayed as they come, and a client disconnect aborts the upstream promptly', async () => {
      await matrix(
        CLIENTS,
        (cl) => cl,
        async (client) => {
          const marker = newMarker('slow');
          const ac = new AbortController();
          const started = performance.now();
          let firstText: number | undefined;
          let abortedAt = 0;
          let deltas = 0;
          const req = { ...body(client, model('slow-stream'), marker), stream: true };
          const options = { signal: ac.signal };
          try {
            const s =
              client === 'messages'
                ? await c.anthropic.messages.create(req, options)
                : client === 'chat'
                  ? await c.openai.chat.completions.create(req, options)
                  : await c.openai.responses.create(req, options);
            for await (const event of s as unknown as AsyncIterable<any>) {
              const isText =
                client === 'chat'
                  ? !!event.choices?.[0]?.delta?.content
                  : client === 'responses'
                    ? event.type === 'response.output_text.delta'
                    : event.delta?.type === 'text_delta';
              if (!isText) continue;
              firstText ??= performance.now() - started;
              if (++deltas === 3) {
                abortedAt = Date.now();
                ac.abort();
              }
            }
          } catch {
            // the SDKs may surface the abort as an error
          }
          check(firstText !== undefined && abortedAt > 0, `only ${deltas} deltas arrived`);
          expect(firstText).toBeLessThan(1_000);
          const rec = await onlyRequest(marker);
          const seen = await eventually(() => rec.abortedAt, 3_000);
          check(seen !== undefined, 'the upstream never saw the request go away');
          expect(seen - abortedAt).toBeLessThan(1_000);
        },
      );
    });

    test('every call is billed from the upstream usage, exactly', async () => {
      const acct = await createAccount(gw, uniqueEmail('respbill'), 1);
      const cl = clientsFor(acct.key);
      const runs: Array<[Client, boolean]> = [
        ['chat', false],
        ['chat', true],
        ['responses', false],
        ['responses', true],
        ['messages', true],
      ];
      await matrix(
        runs,
        ([cli, st]) => `${cli} ${st}`,
        async ([client, stream]) => {
          if (client === 'chat' && stream) {
            // No include_usage: the client gets no usage chunk, the charge still uses the upstream's figures.
            const s = (await cl.openai.chat.completions.create({
              ...body('chat', model('text'), newMarker('b')),
              stream: true,
            })) as unknown as AsyncIterable<OpenAI.ChatCompletionChunk>;
            for await (const chunk of s) check(!chunk.usage, 'usage reached a client that did not ask');
            return;
          }
          await call(cl, client, body(client, model('text'), newMarker('bill')), stream);
        },
      );
      const expected = 1 - runs.length * cost(FAKE_INPUT_TOKENS, TEXT_DELTAS.length);
      await expectBalance(gw, acct.key, expected);
      const tasks = await api(gw, 'GET', '/v1/tasks?category=llm&page_size=100', { key: acct.key });
      expect(tasks.body.data).toHaveLength(runs.length);
      for (const task of tasks.body.data) {
        expect(task).toMatchObject({ category: 'llm', status: 'completed', model: model('text') });
        expect(task.cost).toBeCloseTo(cost(FAKE_INPUT_TOKENS, TEXT_DELTAS.length), 12);
        expect(task.output.usage).toMatchObject({ input_tokens: FAKE_INPUT_TOKENS, output_tokens: TEXT_DELTAS.length });
      }
    });

    test("upstream errors come back in each client's own error shape; 429 is retried", async () => {
      const cases = CLIENTS.flatMap((client) =>
        [false, true].flatMap((stream) =>
          (['always-500', 'missing', 'flaky-429'] as const).map((sc) => [client, stream, sc] as const),
        ),
      );
      await matrix(
        cases,
        ([cl, st, sc]) => `${cl} ${st ? 'stream' : 'json'} ${sc}`,
        async ([client, stream, scenario]) => {
          const marker = newMarker('err');
          const result = await call(c, client, body(client, model(scenario), marker), stream).then(
            (out) => out,
            (e: unknown) => e,
          );
          const recs = fake.find(marker);
          if (scenario === 'flaky-429') {
            check(!(result instanceof Error), `flaky-429 failed: ${String(result)}`);
            expect((result as Outcome).text).toBe(FULL_TEXT);
            expect(recs.map((r) => r.status)).toEqual([429, 200]);
            return;
          }
          // Retries exhausted on a 5xx: the gateway answers 502 (the SDKs' InternalServerError).
          const [OpenAIClass, AnthropicClass, status, attempts] =
            scenario === 'always-500'
              ? [OpenAI.InternalServerError, Anthropic.InternalServerError, 502, 3]
              : [OpenAI.NotFoundError, Anthropic.NotFoundError, 404, 1];
          const Expected = client === 'messages' ? AnthropicClass : OpenAIClass;
          check(
            result instanceof Expected,
            `expected ${Expected.name}, got ${result instanceof Error ? `${result.constructor.name} ${(result as any).status}` : 'success'}`,
          );
          expect((result as any).status).toBe(status);
          expect(recs).toHaveLength(attempts);
          const raw = await api(
            gw,
            'POST',
            client === 'chat' ? '/v1/chat/completions' : client === 'responses' ? '/v1/responses' : '/v1/messages',
            {
              key,
              body: body(client, model(scenario), newMarker('raw')),
            },
          );
          expect(raw.status).toBe(status);
          // The upstream's own message is relayed (it names the upstream model the gateway asked for).
          if (scenario === 'missing') expect(JSON.stringify(raw.body)).toContain('up-missing');
          if (client === 'messages')
            expect(raw.body).toMatchObject({
              type: 'error',
              error: { type: expect.any(String), message: expect.any(String) },
            });
          else expect(raw.body).toMatchObject({ error: { message: expect.any(String), type: expect.any(String) } });
        },
      );
    });

    test("a broken upstream stream ends the client's stream with its format's error event, never a normal finish", async () => {
      const cases = pairs(CLIENTS, ['error-event', 'garbage', 'cut'] as Scenario[]);
      await matrix(
        cases,
        ([cl, sc]) => `${cl} ${sc}`,
        async ([client, scenario]) => {
          const req = { ...body(client, model(scenario), newMarker('broken')), stream: true };
          const events: any[] = [];
          let thrown: unknown;
          try {
            const s =
              client === 'messages'
                ? await c.anthropic.messages.create(req)
                : client === 'chat'
                  ? await c.openai.chat.completions.create(req)
                  : await c.openai.responses.create(req);
            for await (const event of s as unknown as AsyncIterable<any>) events.push(event);
          } catch (err) {
            thrown = err;
          }
          const text =
            client === 'chat'
              ? events.map((e) => e.choices?.[0]?.delta?.content ?? '').join('')
              : client === 'responses'
                ? events
                    .filter((e) => e.type === 'response.output_text.delta')
                    .map((e) => e.delta)
                    .join('')
                : events
                    .filter((e) => e.delta?.type === 'text_delta')
                    .map((e) => e.delta.text)
                    .join('');
          expect(text).toBe(TEXT_DELTAS.slice(0, 3).join(''));
          const types = events.map((e) => e.type);
          if (client === 'chat') check(!events.some((e) => e.choices?.[0]?.finish_reason), 'a finish_reason arrived');
          if (client === 'responses')
            check(
              !types.includes('response.completed') && !types.includes('response.incomplete'),
              `normal end: ${types}`,
            );
          if (client === 'messages') check(!types.includes('message_stop'), `normal end: ${types}`);
          const ApiError = client === 'messages' ? Anthropic.APIError : OpenAI.APIError;
          const ConnError = client === 'messages' ? Anthropic.APIConnectionError : OpenAI.APIConnectionError;
          check(
            thrown instanceof ApiError && !(thrown instanceof ConnError),
            `the SDK raised no API error (got ${thrown ? (thrown as Error).constructor.name : 'a clean end'} after ${types.join(',')})`,
          );
        },
      );
    });
  });
}

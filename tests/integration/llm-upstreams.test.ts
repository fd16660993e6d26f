import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { api, createAccount, expectCallsCharged, uniqueEmail } from '../helpers/api.ts';
import {
  FAKE_INPUT_TOKENS,
  FULL_TEXT,
  NO_STREAMING_MESSAGE,
  SCENARIOS,
  TEXT_DELTAS,
  eventually,
  scenarioModel,
  startFakeLlmUpstream,
  upstreamModelEcho,
  type FakeLlmUpstream,
  type RecordedRequest,
  type Scenario,
} from '../helpers/fake-llm-upstream.ts';
import { LATE_END_MS } from '../helpers/fake-upstream-server.ts';
import { MODES, startGateway, type GatewayProcess } from '../helpers/gateway-process.ts';

/**
 * Issue 3: every catalog LLM answers on all three client formats whatever its upstream speaks.
 * Two fake upstreams (OpenAI chat completions, Anthropic Messages) on loopback; the official SDKs
 * drive the gateway; every case asserts both what the client got and what the upstream received.
 * Cases of one feature run concurrently and report every failing combination at once.
 */

type ClientFormat = 'chat' | 'responses' | 'messages';
type Upstream = 'oai' | 'ant';
const CLIENTS: ClientFormat[] = ['chat', 'responses', 'messages'];
const UPSTREAMS: Upstream[] = ['oai', 'ant'];
const PROVIDER: Record<Upstream, string> = { oai: 'fakeoai', ant: 'fakeant' };
const TIGHT: Record<Upstream, string> = { oai: 'tightoai', ant: 'tightant' };
const modelId = (up: Upstream, scenario: Scenario) =>
  `${scenario === 'slow-headers' ? TIGHT[up] : PROVIDER[up]}/${scenario}`;
/** $1 in / $2 out per million tokens, as configured below. */
const cost = (input: number, output: number) => (input * 1 + output * 2) / 1_000_000;
/** USD per web search on the web-search scenario's models. */
const SEARCH_USD = 0.01;

const PNG_B64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const DATA_URL = `data:image/png;base64,${PNG_B64}`;
const HTTP_IMAGE = 'https://images.example.com/cat.png';

/** The natural, length and tool endings in each client format's own words. */
const FINISH: Record<ClientFormat, { stop: string; length: string; tools: string; stopSequence?: string }> = {
  chat: { stop: 'stop', length: 'length', tools: 'tool_calls', stopSequence: 'stop' },
  responses: { stop: 'completed', length: 'incomplete:max_output_tokens', tools: 'completed' },
  messages: { stop: 'end_turn', length: 'max_tokens', tools: 'tool_use', stopSequence: 'stop_sequence' },
};

let markerCount = 0;
const newMarker = (label: string) => `[${label}-${Date.now().toString(36)}-${markerCount++}]`;

/** Runs every case, then fails once listing every failing case (a bare Promise.all would hide all but one). */
async function matrix<T>(cases: T[], label: (c: T) => string, run: (c: T) => Promise<void>): Promise<void> {
  const results = await Promise.allSettled(cases.map(run));
  const failures = results.flatMap((r, i) =>
    r.status === 'rejected'
      ? [`- ${label(cases[i]!)}: ${String((r.reason as Error)?.message ?? r.reason).replace(/\u001b\[[0-9;]*m/g, '')}`]
      : [],
  );
  if (failures.length) throw new Error(`${failures.length}/${cases.length} cases failed:\n${failures.join('\n')}`);
}

const pairs = <A, B>(as: A[], bs: B[]) => as.flatMap((a) => bs.map((b) => [a, b] as const));
const triples = <A, B, C>(as: A[], bs: B[], cs: C[]) =>
  as.flatMap((a) => bs.flatMap((b) => cs.map((c) => [a, b, c] as const)));

function check(cond: unknown, message: string): asserts cond {
  if (!cond) throw new Error(message);
}

/** Text of an OpenAI content (string or parts) or an Anthropic tool_result content. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map((p: any) => (p?.type === 'text' || p?.type === 'input_text' || p?.type === 'output_text' ? p.text : ''))
      .join('');
  return '';
}

// ---------------------------------------------------------------------------------------------
// One request in each client format, normalised so the cases below read the same for all three.

interface Ask {
  marker: string;
  maxTokens?: number;
  stop?: string[];
  tools?: boolean;
  images?: boolean;
}

interface ToolCall {
  id: string;
  name: string;
  args: unknown;
}

interface Outcome {
  text: string;
  /** chat finish_reason; responses `status` or `incomplete:<reason>`; messages stop_reason. */
  finish: string | null | undefined;
  stopSequence?: string | null;
  usage?: { input: number; output: number };
  model: string;
  toolCalls: ToolCall[];
  /** Every stream event as the SDK yielded it. */
  events: any[];
  /** Models named anywhere in the stream (chunks, response objects, message_start). */
  streamModels: string[];
  /** Tool-call shape problems seen in the stream (null ids or names, missing indices…). */
  toolProblems: string[];
  /** Milliseconds from the call to the first text delta event. */
  firstTextMs?: number;
  /** The non-streamed body or the final object of a stream helper. */
  final: any;
}

const TOOL_SCHEMA = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };

function userContent(client: ClientFormat, ask: Ask): any {
  const text = `Tell me something. ${ask.marker}`;
  if (!ask.images) return text;
  if (client === 'chat') {
    return [
      { type: 'text', text },
      { type: 'image_url', image_url: { url: DATA_URL } },
      { type: 'image_url', image_url: { url: HTTP_IMAGE } },
    ];
  }
  if (client === 'responses') {
    return [
      { type: 'input_text', text },
      { type: 'input_image', image_url: DATA_URL, detail: 'auto' },
      { type: 'input_image', image_url: HTTP_IMAGE, detail: 'auto' },
    ];
  }
  return [
    { type: 'text', text },
    { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_B64 } },
    { type: 'image', source: { type: 'url', url: HTTP_IMAGE } },
  ];
}

function toolsFor(client: ClientFormat): any[] {
  const defs = [
    { name: 'get_weather', description: 'Current weather in a city' },
    { name: 'get_time', description: 'Local time in a city' },
  ];
  if (client === 'chat') return defs.map((d) => ({ type: 'function', function: { ...d, parameters: TOOL_SCHEMA } }));
  if (client === 'responses')
    return defs.map((d) => ({ type: 'function', ...d, parameters: TOOL_SCHEMA, strict: false }));
  return defs.map((d) => ({ ...d, input_schema: TOOL_SCHEMA }));
}

interface Clients {
  openai: OpenAI;
  anthropic: Anthropic;
}

/** Builds the request body of `client` for a first turn (or with `messages` for a later one). */
function requestBody(client: ClientFormat, model: string, ask: Ask, history?: any[]): any {
  const first = { role: 'user', content: userContent(client, ask) };
  if (client === 'chat') {
    return {
      model,
      messages: history ?? [first],
      ...(ask.maxTokens !== undefined ? { max_tokens: ask.maxTokens } : {}),
      ...(ask.stop ? { stop: ask.stop } : {}),
      ...(ask.tools ? { tools: toolsFor(client) } : {}),
    };
  }
  if (client === 'responses') {
    return {
      model,
      input: history ?? [first],
      ...(ask.maxTokens !== undefined ? { max_output_tokens: ask.maxTokens } : {}),
      ...(ask.tools ? { tools: toolsFor(client) } : {}),
    };
  }
  return {
    model,
    max_tokens: ask.maxTokens ?? 1000,
    messages: history ?? [first],
    ...(ask.stop ? { stop_sequences: ask.stop } : {}),
    ...(ask.tools ? { tools: toolsFor(client) } : {}),
  };
}

function chatOutcome(res: OpenAI.ChatCompletion): Outcome {
  const msg = res.choices[0]?.message;
  return {
    text: msg?.content ?? '',
    finish: res.choices[0]?.finish_reason,
    usage: res.usage ? { input: res.usage.prompt_tokens, output: res.usage.completion_tokens } : undefined,
    model: res.model,
    toolCalls: (msg?.tool_calls ?? []).map((tc: any) => ({
      id: tc.id,
      name: tc.function?.name,
      args: JSON.parse(tc.function?.arguments ?? 'null'),
    })),
    events: [],
    streamModels: [],
    toolProblems: [],
    final: res,
  };
}

function responsesOutcome(res: OpenAI.Responses.Response): Outcome {
  return {
    text: res.output_text,
    finish: res.status === 'incomplete' ? `incomplete:${res.incomplete_details?.reason}` : res.status,
    usage: res.usage ? { input: res.usage.input_tokens, output: res.usage.output_tokens } : undefined,
    model: res.model,
    toolCalls: res.output.flatMap((item: any) =>
      item.type === 'function_call' ? [{ id: item.call_id, name: item.name, args: JSON.parse(item.arguments) }] : [],
    ),
    events: [],
    streamModels: [],
    toolProblems: [],
    final: res,
  };
}

function messagesOutcome(res: Anthropic.Message): Outcome {
  return {
    text: res.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join(''),
    finish: res.stop_reason,
    stopSequence: res.stop_sequence,
    usage: { input: res.usage.input_tokens, output: res.usage.output_tokens },
    model: res.model,
    toolCalls: res.content.flatMap((b) => (b.type === 'tool_use' ? [{ id: b.id, name: b.name, args: b.input }] : [])),
    events: [],
    streamModels: [],
    toolProblems: [],
    final: res,
  };
}

/** The account's LLM tasks once at least `atLeast` are listed (a call's record lands after its answer). */
async function llmTasks(gw: GatewayProcess, key: string, atLeast: number): Promise<any[]> {
  const listed = await eventually(
    async () => {
      const res = await api(gw, 'GET', '/v1/tasks?category=llm&page_size=100', { key });
      return Array.isArray(res.body?.data) && res.body.data.length >= atLeast ? (res.body.data as any[]) : undefined;
    },
    5_000,
    50,
  );
  return listed ?? [];
}

/**
 * One call. Streams go through the SDKs' own stream objects: chat uses the raw chunk iterator
 * (with `include_usage`) so every delta can be inspected, or `chat.completions.stream()` with
 * `helper`; responses uses `responses.stream()` + `finalResponse()`; messages uses
 * `messages.stream()` + `finalMessage()`.
 */
async function call(
  c: Clients,
  client: ClientFormat,
  model: string,
  ask: Ask,
  opts: { stream: boolean; helper?: boolean; history?: any[] },
): Promise<Outcome> {
  const body = requestBody(client, model, ask, opts.history);
  const started = performance.now();
  if (!opts.stream) {
    if (client === 'chat') return chatOutcome(await c.openai.chat.completions.create(body));
    if (client === 'responses') return responsesOutcome(await c.openai.responses.create(body));
    return messagesOutcome(await c.anthropic.messages.create(body));
  }
  if (client === 'chat' && opts.helper) {
    const stream = c.openai.chat.completions.stream({ ...body, stream_options: { include_usage: true } });
    const events: any[] = [];
    let firstTextMs: number | undefined;
    for await (const chunk of stream) {
      events.push(chunk);
      if (firstTextMs === undefined && chunk.choices[0]?.delta?.content) firstTextMs = performance.now() - started;
    }
    const out = chatOutcome(await stream.finalChatCompletion());
    return { ...out, events, firstTextMs, streamModels: events.map((e) => e.model) };
  }
  if (client === 'chat') {
    const stream = (await c.openai.chat.completions.create({
      ...body,
      stream: true,
      stream_options: { include_usage: true },
    })) as unknown as AsyncIterable<any>;
    const events: any[] = [];
    let text = '';
    let finish: string | null | undefined;
    let usage: Outcome['usage'];
    let firstTextMs: number | undefined;
    const calls = new Map<number, { id: string; name: string; args: string }>();
    const toolProblems: string[] = [];
    for await (const chunk of stream) {
      events.push(chunk);
      const choice = chunk.choices[0];
      if (choice?.delta?.content) {
        firstTextMs ??= performance.now() - started;
        text += choice.delta.content;
      }
      for (const tc of choice?.delta?.tool_calls ?? []) {
        if (!Number.isInteger(tc.index))
          toolProblems.push(`tool_call delta without an integer index: ${JSON.stringify(tc)}`);
        if ('id' in tc && typeof tc.id !== 'string')
          toolProblems.push(`tool_call delta with id ${JSON.stringify(tc.id)}`);
        if (tc.function && 'name' in tc.function && typeof tc.function.name !== 'string')
          toolProblems.push(`tool_call delta with name ${JSON.stringify(tc.function.name)}`);
        const known = calls.get(tc.index);
        if (!known) {
          if (typeof tc.id !== 'string' || !tc.id || typeof tc.function?.name !== 'string' || !tc.function.name) {
            toolProblems.push(`first delta of tool call ${tc.index} lacks id or name: ${JSON.stringify(tc)}`);
          }
          calls.set(tc.index, { id: tc.id, name: tc.function?.name, args: tc.function?.arguments ?? '' });
        } else {
          if (tc.id && tc.id !== known.id) toolProblems.push(`tool call ${tc.index} changed id ${known.id} → ${tc.id}`);
          known.args += tc.function?.arguments ?? '';
        }
      }
      if (choice?.finish_reason) finish = choice.finish_reason;
      if (chunk.usage) usage = { input: chunk.usage.prompt_tokens, output: chunk.usage.completion_tokens };
    }
    const indices = [...calls.keys()].sort((a, b) => a - b);
    return {
      text,
      finish,
      usage,
      model: events.at(-1)?.model,
      toolCalls: indices.map((i) => {
        const tc = calls.get(i)!;
        let args: unknown;
        try {
          args = JSON.parse(tc.args);
        } catch {
          args = `<invalid JSON ${tc.args}>`;
        }
        return { id: tc.id, name: tc.name, args, index: i } as ToolCall;
      }),
      events,
      streamModels: events.map((e) => e.model),
      toolProblems: indices.some((i, k) => i !== k)
        ? [...toolProblems, `tool-call indices ${JSON.stringify(indices)} do not run 0, 1, …`]
        : toolProblems,
      firstTextMs,
      final: undefined,
    };
  }
  if (client === 'responses') {
    const stream = c.openai.responses.stream(body);
    const events: any[] = [];
    const toolProblems: string[] = [];
    let firstTextMs: number | undefined;
    for await (const event of stream as AsyncIterable<any>) {
      events.push(event);
      if (event.type === 'response.output_text.delta') firstTextMs ??= performance.now() - started;
      if (
        (event.type === 'response.output_item.added' || event.type === 'response.output_item.done') &&
        event.item?.type === 'function_call'
      ) {
        if (typeof event.item.call_id !== 'string' || !event.item.call_id)
          toolProblems.push(`${event.type} function_call with call_id ${JSON.stringify(event.item.call_id)}`);
        if (typeof event.item.name !== 'string' || !event.item.name)
          toolProblems.push(`${event.type} function_call with name ${JSON.stringify(event.item.name)}`);
      }
    }
    const out = responsesOutcome(await stream.finalResponse());
    return {
      ...out,
      events,
      firstTextMs,
      toolProblems,
      streamModels: events.flatMap((e) => (e.response?.model !== undefined ? [e.response.model] : [])),
    };
  }
  const stream = c.anthropic.messages.stream(body);
  const events: any[] = [];
  const toolProblems: string[] = [];
  let firstTextMs: number | undefined;
  for await (const event of stream as AsyncIterable<any>) {
    events.push(event);
    if (event.type === 'content_block_delta' && event.delta?.type === 'text_delta')
      firstTextMs ??= performance.now() - started;
    if (event.type === 'content_block_start' && event.content_block?.type === 'tool_use') {
      if (typeof event.content_block.id !== 'string' || !event.content_block.id)
        toolProblems.push(`tool_use block with id ${JSON.stringify(event.content_block.id)}`);
      if (typeof event.content_block.name !== 'string' || !event.content_block.name)
        toolProblems.push(`tool_use block with name ${JSON.stringify(event.content_block.name)}`);
    }
  }
  const out = messagesOutcome(await stream.finalMessage());
  return {
    ...out,
    events,
    firstTextMs,
    toolProblems,
    streamModels: events.flatMap((e) => (e.type === 'message_start' ? [e.message?.model] : [])),
  };
}

/** A raw SDK stream (chunks or events as the SDK yields them) for a request body of `client`. */
async function openStream(
  c: Clients,
  client: ClientFormat,
  body: any,
  signal?: AbortSignal,
): Promise<AsyncIterable<any>> {
  const options = signal ? { signal } : undefined;
  const streamed = { ...body, stream: true };
  if (client === 'chat')
    return (await c.openai.chat.completions.create(streamed, options)) as unknown as AsyncIterable<any>;
  if (client === 'responses')
    return (await c.openai.responses.create(streamed, options)) as unknown as AsyncIterable<any>;
  return (await c.anthropic.messages.create(streamed, options)) as unknown as AsyncIterable<any>;
}

// ---------------------------------------------------------------------------------------------
// What the upstream received.

function upstreamMessages(rec: RecordedRequest): any[] {
  return rec.body?.messages ?? [];
}

function lastUserContent(rec: RecordedRequest): any[] {
  const users = upstreamMessages(rec).filter((m) => m.role === 'user');
  const content = users.at(-1)?.content;
  return typeof content === 'string' ? [{ type: 'text', text: content }] : (content ?? []);
}

function upstreamMaxTokens(rec: RecordedRequest): unknown {
  return rec.kind === 'openai' ? (rec.body.max_completion_tokens ?? rec.body.max_tokens) : rec.body.max_tokens;
}

function upstreamStops(rec: RecordedRequest): string[] {
  const stop = rec.kind === 'openai' ? rec.body.stop : rec.body.stop_sequences;
  return typeof stop === 'string' ? [stop] : Array.isArray(stop) ? stop : [];
}

async function onlyRequest(fake: FakeLlmUpstream, marker: string): Promise<RecordedRequest> {
  const found = await fake.waitFor(marker, 1, 2_000);
  check(found.length === 1, `upstream saw ${found.length} requests carrying ${marker}, expected 1`);
  return found[0]!;
}

function checkUpstreamBasics(rec: RecordedRequest, scenario: Scenario, stream: boolean, apiKey: string): void {
  expect(rec.path).toBe(rec.kind === 'openai' ? '/v1/chat/completions' : '/v1/messages');
  expect(rec.body.model).toBe(`up-${scenario}`);
  expect(rec.body.stream === true).toBe(stream);
  if (rec.kind === 'openai') {
    expect(rec.headers.authorization).toBe(`Bearer ${apiKey}`);
    if (stream) expect(rec.body.stream_options?.include_usage).toBe(true);
  } else {
    expect(rec.headers['x-api-key']).toBe(apiKey);
    expect(rec.headers['anthropic-version']).toBe('2023-06-01');
    expect(Number.isInteger(rec.body.max_tokens)).toBe(true);
  }
}

// ---------------------------------------------------------------------------------------------

let oai: FakeLlmUpstream;
let ant: FakeLlmUpstream;
let configPath: string;
const fakeOf = (up: Upstream) => (up === 'oai' ? oai : ant);

beforeAll(async () => {
  oai = await startFakeLlmUpstream('openai', { apiKey: 'sk-fake-oai-0123' });
  ant = await startFakeLlmUpstream('anthropic', { apiKey: 'sk-ant-fake-0123' });
  const provider = (id: string, up: Upstream, extra: object) => ({
    id,
    kind: up === 'oai' ? 'openai' : 'anthropic',
    display_name: `Fake ${id}`,
    base_url: fakeOf(up).baseUrl,
    api_key: fakeOf(up).apiKey,
    ...extra,
  });
  const config = {
    rate_limit_per_minute: 100000,
    providers: [
      provider('fakeoai', 'oai', { max_retries: 2, timeout_ms: 2000 }),
      provider('fakeant', 'ant', { max_retries: 2, timeout_ms: 2000 }),
      provider('tightoai', 'oai', { max_retries: 1, timeout_ms: 500 }),
      provider('tightant', 'ant', { max_retries: 1, timeout_ms: 500 }),
      // Its own provider: it learns to leave stream_options out, which must not reach the others.
      provider('strictoai', 'oai', { max_retries: 2, timeout_ms: 2000 }),
    ],
    models: [
      ...UPSTREAMS.flatMap((up) =>
        SCENARIOS.filter((s) => s !== 'slow-headers' && s !== 'no-stream-options').map((s) => {
          const model = scenarioModel(PROVIDER[up], s);
          // Web search is billed per search (docs/money.md): priced on its own scenario only.
          if (s !== 'web-search') return model;
          return { ...model, pricing: { ...model.pricing, per_tool_call: { web_search: SEARCH_USD } } };
        }),
      ),
      ...UPSTREAMS.map((up) => scenarioModel(TIGHT[up], 'slow-headers')),
      scenarioModel('strictoai', 'no-stream-options'),
      // An Anthropic model served first by an OpenAI deployment (its own provider is the standby).
      {
        ...scenarioModel('fakeant', 'text'),
        id: 'fakeant/mixed',
        weight: 0,
        deployments: [{ provider: 'fakeoai', upstream_model: 'up-text' }],
      },
    ],
  };
  configPath = join(await mkdtemp(join(tmpdir(), 'gw-llm-upstreams-')), 'gateway.json');
  await writeFile(configPath, JSON.stringify(config, null, 2));
}, 30_000);

afterAll(async () => {
  await oai?.stop();
  await ant?.stop();
});

for (const mode of MODES) {
  describe(`any LLM on all three formats, whatever its upstream speaks [${mode.name}]`, () => {
    let gw: GatewayProcess;
    let key: string;
    let c: Clients;
    const clientsFor = (apiKey: string): Clients => ({
      openai: new OpenAI({ baseURL: `${gw.url}/v1`, apiKey, maxRetries: 0 }),
      anthropic: new Anthropic({ baseURL: gw.url, apiKey, maxRetries: 0 }),
    });

    beforeAll(async () => {
      gw = await startGateway({ ...(await mode.env('llmupstreams')), GATEWAY_CONFIG: configPath, LOG_LEVEL: 'warn' });
      ({ key } = await createAccount(gw, uniqueEmail('llmup'), 50));
      c = clientsFor(key);
    }, 60_000);
    afterAll(async () => {
      const started = Date.now();
      await gw?.stop();
      const took = Date.now() - started;
      // Everything in flight has ended by now: a slow stop means an upstream stream was left running.
      expect(took).toBeLessThan(5_000);
    }, 30_000);

    test('text and usage on every client format × upstream, streamed and not; the upstream gets its own dialect', async () => {
      const cases = triples(CLIENTS, UPSTREAMS, [false, true]);
      await matrix(
        cases,
        ([cl, up, st]) => `${cl} → ${up} ${st ? 'stream' : 'json'}`,
        async ([client, up, stream]) => {
          const marker = newMarker('text');
          const out = await call(c, client, modelId(up, 'text'), { marker }, { stream });
          expect(out.text).toBe(FULL_TEXT);
          expect(out.finish).toBe(FINISH[client].stop);
          expect(out.usage).toEqual({ input: FAKE_INPUT_TOKENS, output: TEXT_DELTAS.length });
          if (stream) expect(out.events.length).toBeGreaterThan(TEXT_DELTAS.length / 2); // really streamed, not one blob
          const rec = await onlyRequest(fakeOf(up), marker);
          checkUpstreamBasics(rec, 'text', stream, fakeOf(up).apiKey);
          expect(textOf(lastUserContent(rec))).toContain(marker);
          if (client === 'messages' && up === 'ant') expect(rec.body.max_tokens).toBe(1000);
          if (client === 'chat' && stream) {
            const viaHelper = await call(
              c,
              client,
              modelId(up, 'text'),
              { marker: newMarker('helper') },
              { stream, helper: true },
            );
            expect(viaHelper.text).toBe(FULL_TEXT);
            expect(viaHelper.final.choices[0].finish_reason).toBe('stop');
            expect(viaHelper.usage).toEqual({ input: FAKE_INPUT_TOKENS, output: TEXT_DELTAS.length });
          }
          if (client === 'responses' && stream) {
            const types = new Set(out.events.map((e) => e.type));
            for (const t of [
              'response.created',
              'response.in_progress',
              'response.output_item.added',
              'response.content_part.added',
              'response.output_text.delta',
              'response.output_text.done',
              'response.content_part.done',
              'response.output_item.done',
              'response.completed',
            ]) {
              check(types.has(t), `no ${t} event`);
            }
          }
          if (client === 'messages' && stream) {
            const types = out.events.map((e) => e.type);
            expect(types[0]).toBe('message_start');
            expect(types.at(-1)).toBe('message_stop');
            expect(types).toContain('message_delta');
          }
        },
      );
    });

    test("responses name the gateway's model id, never the upstream's (which answers with a dated name)", async () => {
      const cases = triples(CLIENTS, UPSTREAMS, [false, true]);
      await matrix(
        cases,
        ([cl, up, st]) => `${cl} → ${up} ${st ? 'stream' : 'json'}`,
        async ([client, up, stream]) => {
          const out = await call(c, client, modelId(up, 'text'), { marker: newMarker('model') }, { stream });
          expect(out.model).toBe(modelId(up, 'text'));
          if (stream) {
            check(out.streamModels.length > 0, 'the stream named no model');
            const wrong = out.streamModels.filter((m) => m !== modelId(up, 'text'));
            check(
              wrong.length === 0,
              `stream events named ${JSON.stringify([...new Set(wrong)])} (upstream answered as ${upstreamModelEcho('up-text')})`,
            );
          }
        },
      );
    });

    test('a stream whose body ends a moment after its last event keeps its upstream connection for the next call', async () => {
      // `late-end` writes the chunked terminator LATE_END_MS after `[DONE]` / `message_stop`. A
      // passed-through stream that stopped reading at its last event used to cut the connection,
      // so every such call opened a new one (a TLS handshake to a real provider).
      const CALLS = 4;
      const connections: string[] = [];
      for (const [client, up] of pairs(CLIENTS, UPSTREAMS)) {
        const markers: string[] = [];
        for (let i = 0; i < CALLS; i++) {
          const marker = newMarker('keepalive');
          markers.push(marker);
          const out = await call(c, client, modelId(up, 'late-end'), { marker }, { stream: true });
          expect(out.text).toBe(FULL_TEXT);
          // The body's end has come and gone before the next call asks for a connection.
          await Bun.sleep(LATE_END_MS * 3);
        }
        const ports = markers.map((m) => fakeOf(up).find(m)[0]?.remotePort);
        expect(ports).not.toContain(undefined);
        connections.push(`${client} → ${up}: ${new Set(ports).size}`);
      }
      // One connection for the lot; two should the pool hand out another once. Without reading the
      // rest, the passed-through pairs made one per call.
      expect(connections.filter((line) => Number(line.split(': ')[1]) > 2)).toEqual([]);
    });

    test('a stream ends at its upstream’s last event even when the upstream keeps the body open, translated or not', async () => {
      // `stall-after-end` never ends its body after `[DONE]` / `message_stop`. The client's stream
      // must end with that event (a translated one waited for the body's end, the idle timeout),
      // and the gateway gives the rest up within its bound (2 s), not at the idle timeout.
      const cases = pairs(CLIENTS, UPSTREAMS);
      await matrix(
        cases,
        ([cl, up]) => `${cl} → ${up}`,
        async ([client, up]) => {
          const marker = newMarker('stall');
          const started = performance.now();
          const out = await call(c, client, modelId(up, 'stall-after-end'), { marker }, { stream: true });
          expect(out.text).toBe(FULL_TEXT);
          expect(out.finish).toBe(FINISH[client].stop);
          expect(performance.now() - started).toBeLessThan(2_000);
          const rec = await onlyRequest(fakeOf(up), marker);
          const gone = await eventually(() => rec.abortedAt, 5_000);
          expect(gone).toBeDefined();
          expect(gone! - rec.receivedAt).toBeLessThan(4_000);
        },
      );
    });

    test('an upstream answer without end is cut at its bound: a 502 or the stream’s error event, the upstream cancelled, the call billed as failed', async () => {
      // `endless` writes one JSON string for ever: a whole answer past 64 MiB, or a stream event
      // past 32 MiB, would otherwise take the gateway's memory. One call at a time (each moves
      // tens of megabytes), passed through and translated, streamed and not.
      const acct = await createAccount(gw, uniqueEmail('endless'), 1);
      const cl = clientsFor(acct.key);
      const cases = [
        ['chat', 'oai', false],
        ['messages', 'ant', false],
        ['chat', 'oai', true],
        ['messages', 'oai', true],
      ] as const;
      for (const [client, up, stream] of cases) {
        const marker = newMarker('endless');
        const err = await call(cl, client, modelId(up, 'endless'), { marker }, { stream }).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect({ client, up, stream, failed: err instanceof Error }).toEqual({ client, up, stream, failed: true });
        if (!stream) expect({ client, status: (err as { status?: number }).status }).toEqual({ client, status: 502 });
        else expect(String((err as Error).message)).toContain('without ending an event');
        const rec = await onlyRequest(fakeOf(up), marker);
        expect(await eventually(() => rec.abortedAt, 5_000)).toBeDefined();
      }
      const listed = await llmTasks(gw, acct.key, cases.length);
      expect(listed.map((t: { status: string }) => t.status)).toEqual(cases.map(() => 'failed'));
    }, 60_000);

    test('an upstream that answers a stream request with JSON is a 502 saying so, with the upstream’s own words', async () => {
      await matrix(
        pairs(CLIENTS, UPSTREAMS),
        ([cl, up]) => `${cl} → ${up}`,
        async ([client, up]) => {
          const err = await call(
            c,
            client,
            modelId(up, 'json-to-stream'),
            { marker: newMarker('json') },
            { stream: true },
          ).then(
            () => undefined,
            (e: unknown) => e,
          );
          check(err && (err as { status?: number }).status === 502, `expected a 502, got ${String(err)}`);
          expect((err as Error).message).toContain(
            `upstream answered 200 with application/json instead of an event stream: ${NO_STREAMING_MESSAGE}`,
          );
        },
      );
    });

    test('a Messages client’s betas (anthropic-beta) reach an Anthropic upstream, streamed, not and counted; no other client’s do', async () => {
      const BETAS = 'interleaved-thinking-2025-05-14,context-1m-2025-08-07';
      const withBetas = { headers: { 'anthropic-beta': BETAS } };
      const ask = (marker: string) => [{ role: 'user' as const, content: `Tell me something. ${marker}` }];
      const seen = async (marker: string) => (await onlyRequest(fakeOf('ant'), marker)).headers['anthropic-beta'];

      const json = newMarker('beta');
      await c.anthropic.messages.create(
        { model: modelId('ant', 'text'), max_tokens: 100, messages: ask(json) },
        withBetas,
      );
      expect(await seen(json)).toBe(BETAS);
      const streamed = newMarker('beta');
      const stream = await c.anthropic.messages.create(
        { model: modelId('ant', 'text'), max_tokens: 100, messages: ask(streamed), stream: true },
        withBetas,
      );
      for await (const _ of stream) {
        // read to the end
      }
      expect(await seen(streamed)).toBe(BETAS);
      const counted = newMarker('beta');
      await c.anthropic.messages.countTokens({ model: modelId('ant', 'text'), messages: ask(counted) }, withBetas);
      expect(await seen(counted)).toBe(BETAS);
      // A Messages call without betas sends none; a chat client's header means nothing to Anthropic.
      const plain = newMarker('beta');
      await c.anthropic.messages.create({ model: modelId('ant', 'text'), max_tokens: 100, messages: ask(plain) });
      expect(await seen(plain)).toBeUndefined();
      const chat = newMarker('beta');
      await c.openai.chat.completions.create({ model: modelId('ant', 'text'), messages: ask(chat) }, withBetas);
      expect(await seen(chat)).toBeUndefined();
    });

    test('an OpenAI-compatible upstream that refuses stream_options is asked again without it, and then never with it', async () => {
      const acct = await createAccount(gw, uniqueEmail('streamopts'), 1);
      const cl = clientsFor(acct.key);
      const model = 'strictoai/no-stream-options';
      const first = newMarker('opts');
      const out = await call(cl, 'chat', model, { marker: first }, { stream: true });
      expect(out.text).toBe(FULL_TEXT);
      const tried = await fakeOf('oai').waitFor(first, 2, 2_000);
      expect(tried.map((r) => r.body.stream_options ?? null)).toEqual([{ include_usage: true }, null]);
      // Learnt: the next streams (any client format) go without it at once.
      for (const client of ['messages', 'responses'] as const) {
        const marker = newMarker('opts');
        const again = await call(cl, client, model, { marker }, { stream: true });
        expect(again.text).toBe(FULL_TEXT);
        const sent = await onlyRequest(fakeOf('oai'), marker);
        expect(sent.body.stream_options).toBeUndefined();
      }
      // Billed all the same (usage estimated from the stream when the upstream sends none).
      const listed = await llmTasks(gw, acct.key, 3);
      expect(listed.map((t: { status: string }) => t.status)).toEqual(['completed', 'completed', 'completed']);
    });

    // `no-ids`: an upstream that sends no response id (or an empty one) gets the recorded id filled in.
    for (const scenario of ['text', 'no-ids'] as const)
      test(`${scenario}: a same-format answer is the upstream's own (model renamed), streamed or not; every task records the id its client saw`, async () => {
        const acct = await createAccount(gw, uniqueEmail('llmids'), 1);
        const cl = clientsFor(acct.key);
        const seen = new Map<string, string>();
        const cases = triples(CLIENTS, UPSTREAMS, [false, true]);
        await matrix(
          cases,
          ([cl_, up, st]) => `${cl_} → ${up} ${st ? 'stream' : 'json'}`,
          async ([client, up, stream]) => {
            const marker = newMarker('ids');
            const out = await call(cl, client, modelId(up, scenario), { marker }, { stream });
            const id = out.final?.id ?? out.events.find((e) => typeof e?.id === 'string' && e.id)?.id;
            check(typeof id === 'string' && id.length > 0, 'the client saw no response id');
            // Every chunk of a chat stream names the same completion.
            if (client === 'chat' && stream) expect(new Set(out.events.map((e) => e?.id))).toEqual(new Set([id]));
            seen.set(marker, id);
            if (stream) return;
            // Fields the gateway does not model reach a client of the upstream's own format.
            if (client === 'chat' && up === 'oai') {
              expect(out.final).toMatchObject({ system_fingerprint: 'fp_fake0001', service_tier: 'default' });
              expect(out.final.choices[0].message.annotations).toEqual([]);
            }
            if (client === 'messages' && up === 'ant') expect(out.final.usage.service_tier).toBe('standard');
            // Translated answers are the gateway's own: its id prefix, no upstream-only fields.
            if (client === 'chat' && up === 'ant') {
              expect(out.final.id).toStartWith('chatcmpl-');
              expect(out.final.system_fingerprint).toBeUndefined();
            }
            if (client === 'messages' && up === 'oai') expect(out.final.id).toStartWith('msg_');
          },
        );
        const listed = await llmTasks(gw, acct.key, cases.length);
        expect(listed).toHaveLength(cases.length);
        for (const [marker, id] of seen) {
          const task = listed.find((t: any) => JSON.stringify(t.input).includes(marker));
          check(task, `no task for ${marker}`);
          expect({ marker, id: task.output?.id }).toEqual({ marker, id });
        }
      });

    test("max_tokens ends with each format's length reason, and the cap reaches the upstream", async () => {
      const cases = triples(CLIENTS, UPSTREAMS, [false, true]);
      await matrix(
        cases,
        ([cl, up, st]) => `${cl} → ${up} ${st ? 'stream' : 'json'}`,
        async ([client, up, stream]) => {
          const marker = newMarker('len');
          const out = await call(c, client, modelId(up, 'text'), { marker, maxTokens: 16 }, { stream });
          expect(out.text).toBe(TEXT_DELTAS.slice(0, 16).join(''));
          expect(out.finish).toBe(FINISH[client].length);
          expect(out.usage?.output).toBe(16);
          const rec = await onlyRequest(fakeOf(up), marker);
          expect(upstreamMaxTokens(rec)).toBe(16);
        },
      );
    });

    test('a chat client’s body reaches an OpenAI-compatible upstream as written, but for what the gateway withholds', async () => {
      await matrix(
        [false, true],
        (st) => (st ? 'stream' : 'json'),
        async (stream) => {
          const marker = newMarker('chatpass');
          const asWritten = {
            seed: 7,
            frequency_penalty: 0.5,
            presence_penalty: -0.25,
            logit_bias: { '50256': -100 },
            logprobs: true,
            top_logprobs: 2,
            max_completion_tokens: 300,
            prediction: { type: 'content', content: 'The quick' },
            metadata: { team: 'search' },
            // A server's own settings (vLLM's), and a field nobody has heard of.
            top_k: 40,
            chat_template_kwargs: { enable_thinking: false },
            x_experimental: { nested: [1, 'two', null, { deep: true }], big: 12345678901234 },
          };
          const res = await api(gw, 'POST', '/v1/chat/completions', {
            key,
            body: {
              model: modelId('oai', 'text'),
              messages: [
                { role: 'system', content: 'Be brief.', cache_control: { type: 'ephemeral' } },
                {
                  role: 'user',
                  content: [{ type: 'text', text: `Say it. ${marker}`, cache_control: { type: 'ephemeral' } }],
                },
              ],
              ...asWritten,
              service_tier: 'priority',
              store: true,
              stream,
              // Meaningless without a stream (OpenAI refuses it there): sent only with one.
              stream_options: { include_obfuscation: false },
            },
          });
          expect(res.status).toBe(200);
          const sent = await onlyRequest(fakeOf('oai'), marker);
          expect(sent.body.model).toBe('up-text');
          for (const [field, value] of Object.entries(asWritten)) expect(sent.body[field]).toEqual(value);
          expect(sent.body.max_tokens).toBeUndefined();
          // Withheld: the provider's price tier, storage in the operator's account, cache marks.
          expect(sent.body.service_tier).toBeUndefined();
          expect(sent.body.store).toBeUndefined();
          expect(JSON.stringify(sent.body)).not.toContain('cache_control');
          expect(sent.body.messages).toEqual([
            { role: 'system', content: 'Be brief.' },
            { role: 'user', content: [{ type: 'text', text: `Say it. ${marker}` }] },
          ]);
          // A stream asks for its usage, the client's own stream options kept beside it.
          expect(sent.body.stream_options).toEqual(
            stream ? { include_obfuscation: false, include_usage: true } : undefined,
          );
          const warnings = JSON.parse(res.headers.get('x-gateway-warnings') ?? '[]') as Array<{ field?: string }>;
          expect(warnings.map((w) => w.field).sort()).toEqual(['cache_control', 'service_tier', 'store']);
        },
      );
      // What the gateway refuses on its own behalf is refused before any upstream sees it.
      for (const [field, value] of [
        ['n', 2],
        ['audio', { voice: 'alloy', format: 'wav' }],
      ] as const) {
        const refused = await api(gw, 'POST', '/v1/chat/completions', {
          key,
          body: { model: modelId('oai', 'text'), messages: [{ role: 'user', content: 'hi' }], [field]: value },
        });
        expect(refused.status).toBe(400);
        expect(refused.body.error.param).toBe(field);
      }
    });

    test('a Messages client’s body reaches an Anthropic upstream as written, but for what the gateway withholds', async () => {
      const mark = { type: 'ephemeral' };
      await matrix(
        [false, true],
        (st) => (st ? 'stream' : 'json'),
        async (stream) => {
          const marker = newMarker('antpass');
          const textDocument = {
            type: 'document',
            source: { type: 'text', media_type: 'text/plain', data: 'The grass is green.' },
            citations: { enabled: true },
          };
          const searchResult = {
            type: 'search_result',
            source: 'https://example.com/grass',
            title: 'Grass',
            content: [{ type: 'text', text: 'Grass is green.' }],
          };
          const asWritten = {
            max_tokens: 300,
            system: [{ type: 'text', text: 'Be brief.', cache_control: mark }],
            top_k: 40,
            cache_control: mark,
            output_config: { effort: 'max' },
            metadata: { user_id: 'u-1' },
            tools: [{ name: 'lookup', input_schema: { type: 'object' }, input_examples: [{ input: { q: 'x' } }] }],
          };
          const res = await api(gw, 'POST', '/v1/messages', {
            key,
            body: {
              model: modelId('ant', 'text'),
              messages: [
                {
                  role: 'user',
                  content: [
                    textDocument,
                    searchResult,
                    { type: 'text', text: `Say it. ${marker}`, cache_control: mark },
                  ],
                },
              ],
              ...asWritten,
              service_tier: 'auto',
              speed: 'fast',
              inference_geo: 'us',
              container: 'container_011',
              context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] },
              x_experimental: { on: true },
              stream,
            },
          });
          expect(res.status).toBe(200);
          const sent = await onlyRequest(fakeOf('ant'), marker);
          expect(sent.body.model).toBe('up-text');
          expect(sent.body.stream).toBe(stream);
          for (const [field, value] of Object.entries(asWritten)) expect(sent.body[field]).toEqual(value);
          // The blocks a translation drops arrive as written.
          expect(sent.body.messages).toEqual([
            {
              role: 'user',
              content: [textDocument, searchResult, { type: 'text', text: `Say it. ${marker}`, cache_control: mark }],
            },
          ]);
          for (const field of [
            'service_tier',
            'speed',
            'inference_geo',
            'container',
            'context_management',
            'x_experimental',
          ])
            expect(sent.body[field]).toBeUndefined();
          const warnings = JSON.parse(res.headers.get('x-gateway-warnings') ?? '[]') as Array<{ field?: string }>;
          expect(warnings.map((w) => w.field).sort()).toEqual([
            'container',
            'context_management',
            'inference_geo',
            'service_tier',
            'speed',
            'x_experimental',
          ]);
        },
      );
      // What the gateway refuses on its own behalf is refused before any upstream sees it: server
      // tools, and a file of the operator's upstream account.
      const marker = newMarker('antrefused');
      const ask = (extra: Record<string, unknown>, content: unknown[] = [{ type: 'text', text: marker }]) =>
        api(gw, 'POST', '/v1/messages', {
          key,
          body: { model: modelId('ant', 'text'), max_tokens: 10, messages: [{ role: 'user', content }], ...extra },
        });
      const tool = await ask({ tools: [{ type: 'web_search_20250305', name: 'web_search' }] });
      expect(tool.status).toBe(400);
      expect(tool.body.error.message).toContain('tools[0].type');
      const file = await ask({}, [
        { type: 'document', source: { type: 'file', file_id: 'file_011' } },
        { type: 'text', text: marker },
      ]);
      expect(file.status).toBe(400);
      expect(file.body.error.message).toContain(
        "messages[0].content[0].source.type: a file source names the provider's storage",
      );
      expect(await fakeOf('ant').waitFor(marker, 1, 300)).toHaveLength(0);
    });

    test('a Messages body for a model whose deployment speaks chat is translated whole: nothing the passthrough would carry goes missing unsaid', async () => {
      const marker = newMarker('mixed');
      const res = await api(gw, 'POST', '/v1/messages', {
        key,
        body: {
          model: 'fakeant/mixed',
          max_tokens: 100,
          top_k: 5,
          messages: [
            {
              role: 'user',
              content: [
                { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQK' } },
                { type: 'text', text: `Summarise the attached contract ${marker}` },
              ],
            },
          ],
        },
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-gateway-provider')).toBe('fakeoai');
      const sent = await onlyRequest(fakeOf('oai'), marker);
      const warnings = JSON.parse(res.headers.get('x-gateway-warnings') ?? '[]') as Array<{ field?: string }>;
      // The document reaches the chat upstream, or the client is told it did not.
      const documentSent = JSON.stringify(sent.body.messages).includes('JVBERi0xLjQK');
      const documentWarned = warnings.some((w) => w.field?.startsWith('messages[0].content[0]'));
      expect(documentSent || documentWarned).toBe(true);
      expect(warnings.map((w) => w.field)).toContain('top_k');
    });

    test('a PDF passed through to Anthropic is held up to the context window: refused on a balance that covers the text alone', async () => {
      const acct = await createAccount(gw, uniqueEmail('antpdf'), 0.1);
      const marker = newMarker('antpdf');
      const pdf = { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQK' } };
      const ask = (content: unknown[]) =>
        api(gw, 'POST', '/v1/messages', {
          key: acct.key,
          body: { model: modelId('ant', 'text'), max_tokens: 100, messages: [{ role: 'user', content }] },
        });
      const text = { type: 'text', text: `Summarise. ${marker}` };
      const refused = await ask([pdf, text]);
      expect(refused.status).toBe(402);
      expect(refused.body.error.type).toBe('billing_error');
      expect(await fakeOf('ant').waitFor(marker, 1, 300)).toHaveLength(0);
      expect((await ask([text])).status).toBe(200);
      expect(await fakeOf('ant').waitFor(marker, 1, 2_000)).toHaveLength(1);
    });

    test('a Messages client’s web searches on Anthropic are billed per search; its client tools pass; unbounded ones are refused', async () => {
      const acct = await createAccount(gw, uniqueEmail('antsearch'), 1);
      const cl = clientsFor(acct.key);
      const bash = { type: 'bash_20250124', name: 'bash' };
      await matrix(
        [false, true],
        (st) => (st ? 'stream' : 'json'),
        async (stream) => {
          const marker = newMarker('antsearch');
          const req = {
            model: modelId('ant', 'web-search'),
            max_tokens: 300,
            messages: [{ role: 'user', content: `Search. ${marker}` }],
            tools: [{ type: 'web_search_20250305', name: 'web_search' }, bash],
          };
          const types: string[] = [];
          let headers: Headers;
          if (stream) {
            const { data, response } = await cl.anthropic.messages
              .create({ ...req, stream: true } as any)
              .withResponse();
            headers = response.headers;
            for await (const event of data as unknown as AsyncIterable<any>)
              if (event.type === 'content_block_start') types.push(event.content_block.type);
          } else {
            const { data, response } = await cl.anthropic.messages.create(req as any).withResponse();
            headers = response.headers;
            types.push(...(data as any).content.map((b: any) => b.type));
          }
          // The upstream's own blocks reach the client as it wrote them.
          expect(types).toEqual([
            'server_tool_use',
            'web_search_tool_result',
            'server_tool_use',
            'web_search_tool_result',
            'text',
          ]);
          const sent = await onlyRequest(fakeOf('ant'), marker);
          // No bound asked: the gateway set one, and said so; the client's own tool went as written.
          expect(sent.body.tools).toEqual([{ type: 'web_search_20250305', name: 'web_search', max_uses: 16 }, bash]);
          const warnings = JSON.parse(headers.get('x-gateway-warnings') ?? '[]');
          expect(warnings.map((w: any) => [w.type, w.field])).toEqual([['changed-value', 'tools[0].max_uses']]);
        },
      );
      await expectCallsCharged(gw, acct.key, {
        startUsd: 1,
        calls: 2,
        perCallUsd: cost(FAKE_INPUT_TOKENS, TEXT_DELTAS.length) + 2 * SEARCH_USD,
        builtInToolCalls: { web_search: 2 },
      });
      const ask = (model: string, tools: unknown[]) =>
        api(gw, 'POST', '/v1/messages', {
          key: acct.key,
          body: { model, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], tools },
        });
      // The hold: each search the tool may make at its price, and what the searches read into the
      // conversation up to the context window (128,000 tokens at $1 per million). On $0.20 two
      // searches fit ($0.02 + $0.128 + the rest), sixteen do not ($0.16 + $0.128).
      const small = await createAccount(gw, uniqueEmail('antsearchsmall'), 0.2);
      const held = (maxUses: number) =>
        api(gw, 'POST', '/v1/messages', {
          key: small.key,
          body: {
            model: modelId('ant', 'web-search'),
            max_tokens: 10,
            messages: [{ role: 'user', content: 'hi' }],
            tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: maxUses }],
          },
        });
      expect((await held(16)).status).toBe(402);
      expect((await held(2)).status).toBe(200);
      const unbounded = await ask(modelId('ant', 'web-search'), [
        { type: 'code_execution_20250825', name: 'code_execution' },
      ]);
      expect(unbounded.status).toBe(400);
      expect(unbounded.body.error.message).toContain(
        "tools[0].type: tool type 'code_execution_20250825' is not supported",
      );
      const unpriced = await ask(modelId('ant', 'text'), [
        { type: 'web_search_20250305', name: 'web_search', max_uses: 2 },
      ]);
      expect(unpriced.status).toBe(400);
      expect(unpriced.body.error.message).toContain('pricing.per_tool_call.web_search');
      // A Messages client toward another upstream: Anthropic's tools cannot be translated, and are refused.
      const translated = await ask(modelId('oai', 'web-search'), [bash]);
      expect(translated.status).toBe(400);
      expect(translated.body.error.message).toContain('tools[0].type');
    });

    test('stop sequences are not dropped toward either upstream and end the text where they occur', async () => {
      const cases = triples(['chat', 'messages'] as ClientFormat[], UPSTREAMS, [false, true]);
      await matrix(
        cases,
        ([cl, up, st]) => `${cl} → ${up} ${st ? 'stream' : 'json'}`,
        async ([client, up, stream]) => {
          const marker = newMarker('stop');
          const out = await call(c, client, modelId(up, 'text'), { marker, stop: ['lazy', 'NEVER'] }, { stream });
          const rec = await onlyRequest(fakeOf(up), marker);
          expect(upstreamStops(rec)).toEqual(['lazy', 'NEVER']);
          expect(out.text).toBe('The quick brown fox jumps over the ');
          if (client === 'chat') expect(out.finish).toBe('stop');
          else if (up === 'ant') {
            expect(out.finish).toBe('stop_sequence');
            expect(out.stopSequence).toBe('lazy');
          } else {
            // An OpenAI-style upstream only says "stop": end_turn is honest, stop_sequence must then name it.
            expect(['end_turn', 'stop_sequence']).toContain(out.finish as string);
            if (out.finish === 'stop_sequence') expect(out.stopSequence).toBe('lazy');
          }
        },
      );
    });

    test('parallel tool calls (indices 0,1; no null ids or names) and tool results in a follow-up turn', async () => {
      const cases = triples(CLIENTS, UPSTREAMS, [false, true]);
      await matrix(
        cases,
        ([cl, up, st]) => `${cl} → ${up} ${st ? 'stream' : 'json'}`,
        async ([client, up, stream]) => {
          const marker = newMarker('tools');
          const model = modelId(up, 'tools');
          const first = await call(c, client, model, { marker, tools: true }, { stream });
          expect(first.toolProblems).toEqual([]);
          expect(first.finish).toBe(FINISH[client].tools);
          expect(first.toolCalls.map((t) => t.name)).toEqual(['get_weather', 'get_time']);
          expect(first.toolCalls.map((t) => t.args)).toEqual([{ city: 'Paris' }, { city: 'Tokyo' }]);
          for (const t of first.toolCalls)
            check(typeof t.id === 'string' && t.id.length > 0, `tool call id ${JSON.stringify(t.id)}`);
          check(first.toolCalls[0]!.id !== first.toolCalls[1]!.id, 'both tool calls have the same id');
          if (client === 'chat' && stream) {
            const indices = first.events.flatMap((e) =>
              (e.choices[0]?.delta?.tool_calls ?? []).map((tc: any) => tc.index),
            );
            expect([...new Set(indices)].sort()).toEqual([0, 1]);
          }
          if (client === 'chat' && !stream)
            expect(first.final.choices[0].message.tool_calls.map((tc: any) => tc.type)).toEqual([
              'function',
              'function',
            ]);
          const firstRec = await onlyRequest(fakeOf(up), marker);
          const toolNames =
            up === 'oai'
              ? firstRec.body.tools?.map((t: any) => t.function?.name)
              : firstRec.body.tools?.map((t: any) => t.name);
          expect(toolNames).toEqual(['get_weather', 'get_time']);
          const schema =
            up === 'oai' ? firstRec.body.tools[0].function.parameters : firstRec.body.tools[0].input_schema;
          expect(schema).toMatchObject(TOOL_SCHEMA);

          // Second turn: send both results back.
          const results = ['18C', '09:00'];
          const user = { role: 'user', content: userContent(client, { marker }) };
          let history: any[];
          if (client === 'chat') {
            const msg = first.final?.choices[0].message ?? {
              content: first.text || null,
              tool_calls: first.toolCalls.map((t) => ({
                id: t.id,
                type: 'function',
                function: { name: t.name, arguments: JSON.stringify(t.args) },
              })),
            };
            history = [
              user,
              { role: 'assistant', content: msg.content, tool_calls: msg.tool_calls },
              ...first.toolCalls.map((t, i) => ({ role: 'tool', tool_call_id: t.id, content: results[i] })),
            ];
          } else if (client === 'responses') {
            history = [
              user,
              ...first.final.output,
              ...first.toolCalls.map((t, i) => ({ type: 'function_call_output', call_id: t.id, output: results[i] })),
            ];
          } else {
            history = [
              user,
              { role: 'assistant', content: first.final.content },
              {
                role: 'user',
                content: first.toolCalls.map((t, i) => ({
                  type: 'tool_result',
                  tool_use_id: t.id,
                  content: results[i],
                })),
              },
            ];
          }
          const second = await call(c, client, model, { marker, tools: true }, { stream, history });
          expect(second.text).toBe('Results: 18C | 09:00');
          expect(second.finish).toBe(FINISH[client].stop);
          const recs = await fakeOf(up).waitFor(marker, 2, 2_000);
          expect(recs).toHaveLength(2);
          const msgs = upstreamMessages(recs[1]!);
          if (up === 'oai') {
            const assistant = msgs.find((m) => m.role === 'assistant' && m.tool_calls?.length);
            check(assistant, `no assistant message with tool_calls upstream: ${JSON.stringify(msgs)}`);
            expect(
              assistant.tool_calls.map((tc: any) => [tc.type, tc.function.name, JSON.parse(tc.function.arguments)]),
            ).toEqual([
              ['function', 'get_weather', { city: 'Paris' }],
              ['function', 'get_time', { city: 'Tokyo' }],
            ]);
            const tools = msgs.filter((m) => m.role === 'tool');
            expect(tools.map((m) => m.tool_call_id)).toEqual(assistant.tool_calls.map((tc: any) => tc.id));
            expect(tools.map((m) => textOf(m.content))).toEqual(results);
          } else {
            const assistant = msgs.find(
              (m) =>
                m.role === 'assistant' && Array.isArray(m.content) && m.content.some((b: any) => b.type === 'tool_use'),
            );
            check(assistant, `no assistant message with tool_use upstream: ${JSON.stringify(msgs)}`);
            const uses = assistant.content.filter((b: any) => b.type === 'tool_use');
            expect(uses.map((b: any) => [b.name, b.input])).toEqual([
              ['get_weather', { city: 'Paris' }],
              ['get_time', { city: 'Tokyo' }],
            ]);
            const toolResults = msgs.flatMap((m) =>
              m.role === 'user' && Array.isArray(m.content)
                ? m.content.filter((b: any) => b.type === 'tool_result')
                : [],
            );
            expect(toolResults.map((b: any) => b.tool_use_id)).toEqual(uses.map((b: any) => b.id));
            expect(toolResults.map((b: any) => textOf(b.content))).toEqual(results);
          }
        },
      );
    });

    test('images in content reach the upstream in its own format', async () => {
      const cases = triples(CLIENTS, UPSTREAMS, [false, true]);
      await matrix(
        cases,
        ([cl, up, st]) => `${cl} → ${up} ${st ? 'stream' : 'json'}`,
        async ([client, up, stream]) => {
          const marker = newMarker('img');
          const out = await call(c, client, modelId(up, 'text'), { marker, images: true }, { stream });
          expect(out.text).toBe(FULL_TEXT);
          const parts = lastUserContent(await onlyRequest(fakeOf(up), marker));
          expect(textOf(parts)).toContain(marker);
          const images = parts.filter((p) => p.type !== 'text');
          if (up === 'oai') {
            expect(images).toHaveLength(2);
            expect(images[0]).toMatchObject({ type: 'image_url', image_url: { url: DATA_URL } });
            expect(images[1]).toMatchObject({ type: 'image_url', image_url: { url: HTTP_IMAGE } });
          } else {
            expect(images).toEqual([
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_B64 } },
              { type: 'image', source: { type: 'url', url: HTTP_IMAGE } },
            ]);
          }
        },
      );
    });

    test('usage reported only at the end: the messages client still gets the real input_tokens in the final message_delta', async () => {
      const cases: Array<readonly [ClientFormat, Upstream, Scenario]> = [
        ['messages', 'oai', 'text'], // OpenAI: usage only in the last, choices-less chunk
        ['messages', 'oai', 'late-usage'],
        ['messages', 'ant', 'late-usage'], // Anthropic-compatible upstream reporting input in message_delta
        ['chat', 'ant', 'late-usage'],
        ['responses', 'ant', 'late-usage'],
        ['responses', 'oai', 'late-usage'],
      ];
      await matrix(
        cases,
        ([cl, up, sc]) => `${cl} → ${up}/${sc}`,
        async ([client, up, scenario]) => {
          const out = await call(c, client, modelId(up, scenario), { marker: newMarker('late') }, { stream: true });
          expect(out.usage).toEqual({ input: FAKE_INPUT_TOKENS, output: TEXT_DELTAS.length });
          if (client === 'messages') {
            const deltas = out.events.filter((e) => e.type === 'message_delta');
            expect(deltas).toHaveLength(1);
            expect(deltas[0].usage.input_tokens).toBe(FAKE_INPUT_TOKENS);
            expect(deltas[0].usage.output_tokens).toBe(TEXT_DELTAS.length);
          }
        },
      );
    });

    test('streams are charged from the upstream usage even without include_usage; calls are listed in /v1/tasks?category=llm with their cost', async () => {
      const acct = await createAccount(gw, uniqueEmail('llmbill'), 1);
      const cl = clientsFor(acct.key);
      const markers = {
        chatOai: newMarker('bill'),
        chatAnt: newMarker('bill'),
        msgOai: newMarker('bill'),
        respAnt: newMarker('bill'),
        jsonOai: newMarker('bill'),
      };
      const plainChat = async (up: Upstream, marker: string) => {
        const stream = await cl.openai.chat.completions.create({
          model: modelId(up, 'text'),
          messages: [{ role: 'user', content: `hello ${marker}` }],
          stream: true,
        });
        let text = '';
        const withUsage: unknown[] = [];
        for await (const chunk of stream) {
          text += chunk.choices[0]?.delta?.content ?? '';
          if (chunk.usage) withUsage.push(chunk.usage);
          check(chunk.choices.length > 0, 'a choices-less usage chunk reached a client that did not ask for usage');
        }
        expect(text).toBe(FULL_TEXT);
        expect(withUsage).toEqual([]);
      };
      await matrix(
        ['chat→oai', 'chat→ant', 'messages→oai', 'responses→ant', 'chat json→oai'],
        (x) => x,
        async (label) => {
          if (label === 'chat→oai') await plainChat('oai', markers.chatOai);
          if (label === 'chat→ant') await plainChat('ant', markers.chatAnt);
          if (label === 'messages→oai')
            await call(cl, 'messages', modelId('oai', 'text'), { marker: markers.msgOai }, { stream: true });
          if (label === 'responses→ant')
            await call(cl, 'responses', modelId('ant', 'text'), { marker: markers.respAnt }, { stream: true });
          if (label === 'chat json→oai')
            await call(cl, 'chat', modelId('oai', 'text'), { marker: markers.jsonOai }, { stream: false });
        },
      );
      const rec = await onlyRequest(oai, markers.chatOai);
      expect(rec.body.stream_options?.include_usage).toBe(true);

      const expected = 1 - 5 * cost(FAKE_INPUT_TOKENS, TEXT_DELTAS.length);
      const balance = await eventually(
        async () => {
          const b = (await api(gw, 'GET', '/v1/account', { key: acct.key })).body?.data?.balance_usd;
          return typeof b === 'number' && Math.abs(b - expected) < 1e-9 ? b : undefined;
        },
        5_000,
        50,
      );
      expect((await api(gw, 'GET', '/v1/account', { key: acct.key })).body?.data?.balance_usd).toBeCloseTo(expected, 9);
      expect(balance).toBeDefined();

      const listed = await eventually(
        async () => {
          const res = await api(gw, 'GET', '/v1/tasks?category=llm&page_size=100', { key: acct.key });
          return Array.isArray(res.body?.data) && res.body.data.length >= 5 ? res : undefined;
        },
        5_000,
        50,
      );
      const res = listed ?? (await api(gw, 'GET', '/v1/tasks?category=llm&page_size=100', { key: acct.key }));
      expect(res.status).toBe(200);
      expect(res.body.data).toHaveLength(5);
      for (const task of res.body.data) {
        expect(task).toMatchObject({ category: 'llm', status: 'completed' });
        expect(['fakeoai/text', 'fakeant/text']).toContain(task.model);
        expect(task.cost).toBeCloseTo(cost(FAKE_INPUT_TOKENS, TEXT_DELTAS.length), 9);
        expect(task.output?.usage).toMatchObject({
          input_tokens: FAKE_INPUT_TOKENS,
          output_tokens: TEXT_DELTAS.length,
        });
      }
      expect(res.body.data.map((t: any) => t.model).sort()).toEqual([
        'fakeant/text',
        'fakeant/text',
        'fakeoai/text',
        'fakeoai/text',
        'fakeoai/text',
      ]);
    });

    test('no fixed delay: the first streamed text reaches the SDK while the upstream is still slow', async () => {
      // Warm the path once so the figure measures streaming, not a cold start.
      await call(c, 'chat', modelId('oai', 'text'), { marker: newMarker('warm') }, { stream: true });
      const cases = pairs(CLIENTS, UPSTREAMS);
      await matrix(
        cases,
        ([cl, up]) => `${cl} → ${up}`,
        async ([client, up]) => {
          const started = performance.now();
          let firstText: number | undefined;
          const marker = newMarker('ttft');
          const body = requestBody(client, modelId(up, 'slow-stream'), { marker });
          // A gateway that buffered would hold the text for the minute the upstream takes: give up after 2 s.
          const giveUp = AbortSignal.timeout(2_000);
          try {
            for await (const event of await openStream(c, client, body, giveUp)) {
              const isText =
                client === 'chat'
                  ? !!event.choices?.[0]?.delta?.content
                  : client === 'responses'
                    ? event.type === 'response.output_text.delta'
                    : event.type === 'content_block_delta' && event.delta?.type === 'text_delta';
              if (isText) {
                firstText = performance.now() - started;
                break;
              }
            }
          } catch (err) {
            if (!giveUp.aborted) throw err;
          }
          check(firstText !== undefined, 'no text delta arrived');
          expect(firstText).toBeLessThan(300);
          // The upstream was still streaming (its answer takes a minute): the text was relayed as it came.
          const rec = await onlyRequest(fakeOf(up), marker);
          check(
            rec.endedAt === undefined || rec.endedAt - rec.receivedAt > firstText,
            'the upstream had already finished',
          );
        },
      );
    });

    test('a client disconnect mid-stream aborts the upstream request promptly', async () => {
      const cases = pairs(CLIENTS, UPSTREAMS);
      await matrix(
        cases,
        ([cl, up]) => `${cl} → ${up}`,
        async ([client, up]) => {
          const marker = newMarker('gone');
          const body = requestBody(client, modelId(up, 'slow-stream'), { marker });
          const ac = new AbortController();
          let deltas = 0;
          const stream = await openStream(c, client, body, ac.signal);
          let abortedAt = 0;
          try {
            for await (const event of stream) {
              const isText =
                client === 'chat'
                  ? !!event.choices?.[0]?.delta?.content
                  : client === 'responses'
                    ? event.type === 'response.output_text.delta'
                    : event.type === 'content_block_delta';
              if (isText && ++deltas === 3) {
                abortedAt = Date.now();
                ac.abort();
              }
            }
          } catch {
            // the SDKs may surface the abort as an error
          }
          check(abortedAt > 0, `only ${deltas} deltas arrived before the stream ended`);
          const rec = await onlyRequest(fakeOf(up), marker);
          const seen = await eventually(() => rec.abortedAt, 3_000);
          check(
            seen !== undefined,
            `the upstream never saw the request go away (ended at ${rec.endedAt ? `${rec.endedAt - abortedAt} ms after the abort` : 'never'})`,
          );
          expect(seen - abortedAt).toBeLessThan(1_000);
        },
      );
    });

    test("a mid-stream upstream error, garbage or a cut connection ends the client's stream with its format's error, never a normal finish", async () => {
      const cases = triples(CLIENTS, UPSTREAMS, ['error-event', 'garbage', 'cut'] as Scenario[]);
      await matrix(
        cases,
        ([cl, up, sc]) => `${cl} → ${up}/${sc}`,
        async ([client, up, scenario]) => {
          const marker = newMarker('broken');
          const body = requestBody(client, modelId(up, scenario), { marker });
          const events: any[] = [];
          let thrown: unknown;
          try {
            for await (const event of await openStream(c, client, body)) events.push(event);
          } catch (err) {
            thrown = err;
          }
          await onlyRequest(fakeOf(up), marker);
          const text =
            client === 'chat'
              ? events.map((e) => e.choices?.[0]?.delta?.content ?? '').join('')
              : client === 'responses'
                ? events
                    .filter((e) => e.type === 'response.output_text.delta')
                    .map((e) => e.delta)
                    .join('')
                : events
                    .filter((e) => e.type === 'content_block_delta' && e.delta?.type === 'text_delta')
                    .map((e) => e.delta.text)
                    .join('');
          // What arrived before the failure was relayed, and nothing after it.
          expect(text).toBe(TEXT_DELTAS.slice(0, 3).join(''));
          if (client === 'chat') {
            check(
              !events.some((e) => e.choices?.[0]?.finish_reason),
              `a finish_reason arrived: ${JSON.stringify(events.find((e) => e.choices?.[0]?.finish_reason))}`,
            );
            check(
              thrown instanceof OpenAI.APIError && !(thrown instanceof OpenAI.APIConnectionError),
              `the SDK did not raise an API error event (got ${thrown ? `${(thrown as Error).constructor.name}: ${(thrown as Error).message}` : 'a clean end'})`,
            );
          } else if (client === 'responses') {
            const types = events.map((e) => e.type);
            check(
              !types.includes('response.completed') && !types.includes('response.incomplete'),
              `a normal ending arrived: ${types.join(',')}`,
            );
            const errorEvent = types.includes('error') || types.includes('response.failed');
            check(
              errorEvent || (thrown instanceof OpenAI.APIError && !(thrown instanceof OpenAI.APIConnectionError)),
              `no error event and no API error (got ${thrown ? (thrown as Error).constructor.name : 'a clean end'} after ${types.join(',')})`,
            );
          } else {
            const types = events.map((e) => e.type);
            check(
              !types.includes('message_stop') &&
                !events.some((e) => e.type === 'message_delta' && e.delta?.stop_reason),
              `a normal ending arrived: ${types.join(',')}`,
            );
            check(
              thrown instanceof Anthropic.APIError && !(thrown instanceof Anthropic.APIConnectionError),
              `the SDK did not raise an API error event (got ${thrown ? `${(thrown as Error).constructor.name}: ${(thrown as Error).message}` : 'a clean end'})`,
            );
          }
        },
      );
    });

    test('a same-format answer the gateway cannot write again: JSON as the gateway encodes it, a stream ended by its error event; every call recorded', async () => {
      const acct = await createAccount(gw, uniqueEmail('deep'), 1);
      const cl = clientsFor(acct.key);
      const answered = new Map<string, string>();
      for (const [client, up] of [
        ['chat', 'oai'],
        ['messages', 'ant'],
      ] as const) {
        const marker = newMarker('deep');
        const out = await call(cl, client, modelId(up, 'deep-no-ids'), { marker }, { stream: false });
        expect(out.text).toBe(FULL_TEXT);
        expect(out.final.id).toStartWith(client === 'chat' ? 'chatcmpl-' : 'msg_');
        answered.set(marker, out.final.id);
        // What the answer lost is said, in the gateway's warnings header.
        const raw = newMarker('deep');
        const res = await api(gw, 'POST', client === 'chat' ? '/v1/chat/completions' : '/v1/messages', {
          key: acct.key,
          body: requestBody(client, modelId(up, 'deep-no-ids'), { marker: raw }),
        });
        expect(res.status).toBe(200);
        expect(JSON.parse(res.headers.get('x-gateway-warnings') ?? '[]')).toContainEqual(
          expect.objectContaining({ type: 'other' }),
        );
        answered.set(raw, res.body.id);
        const streamed = newMarker('deep');
        let thrown: unknown;
        try {
          for await (const _ of await openStream(
            cl,
            client,
            requestBody(client, modelId(up, 'deep-no-ids'), { marker: streamed }),
          ));
        } catch (err) {
          thrown = err;
        }
        const ApiError = client === 'chat' ? OpenAI.APIError : Anthropic.APIError;
        const ConnectionError = client === 'chat' ? OpenAI.APIConnectionError : Anthropic.APIConnectionError;
        check(
          thrown instanceof ApiError && !(thrown instanceof ConnectionError),
          `${client}: the SDK did not raise the stream's error event (got ${thrown ? `${(thrown as Error).constructor.name}: ${(thrown as Error).message}` : 'a clean end'})`,
        );
        answered.set(streamed, '');
      }
      // Nothing lost: each call is a task, the JSON ones completed under the id their client saw.
      const tasks = await llmTasks(gw, acct.key, answered.size);
      for (const [marker, id] of answered) {
        const task = tasks.find((t: any) => JSON.stringify(t.input).includes(marker));
        check(task, `no task for ${marker}`);
        expect({ marker, status: task.status, id: id ? task.output?.id : '' }).toEqual({
          marker,
          status: id ? 'completed' : 'failed',
          id,
        });
      }
    });

    test('429 then success is retried transparently (the upstream saw two attempts)', async () => {
      const cases = triples(CLIENTS, UPSTREAMS, [false, true]);
      await matrix(
        cases,
        ([cl, up, st]) => `${cl} → ${up} ${st ? 'stream' : 'json'}`,
        async ([client, up, stream]) => {
          const marker = newMarker('429');
          const out = await call(c, client, modelId(up, 'flaky-429'), { marker }, { stream });
          expect(out.text).toBe(FULL_TEXT);
          expect(out.finish).toBe(FINISH[client].stop);
          const recs = fakeOf(up).find(marker);
          expect(recs.map((r) => r.status)).toEqual([429, 200]);
        },
      );
    });

    test('500 always: the client gets a 5xx in its own error format after max_retries + 1 attempts', async () => {
      const cases = triples(CLIENTS, UPSTREAMS, ['json', 'stream', 'raw'] as const);
      await matrix(
        cases,
        ([cl, up, how]) => `${cl} → ${up} ${how}`,
        async ([client, up, how]) => {
          const marker = newMarker('500');
          const body = requestBody(client, modelId(up, 'always-500'), { marker });
          if (how === 'raw') {
            const path =
              client === 'chat' ? '/v1/chat/completions' : client === 'responses' ? '/v1/responses' : '/v1/messages';
            const res = await api(gw, 'POST', path, { key, body });
            check(res.status >= 500 && res.status < 600, `status ${res.status}`);
            if (client === 'messages') {
              expect(res.body).toMatchObject({
                type: 'error',
                error: { type: expect.any(String), message: expect.any(String) },
              });
            } else {
              expect(res.body).toMatchObject({ error: { message: expect.any(String), type: expect.any(String) } });
            }
          } else {
            const stream = how === 'stream';
            const err = await call(c, client, modelId(up, 'always-500'), { marker }, { stream }).then(
              () => undefined,
              (e: unknown) => e,
            );
            if (client === 'messages')
              check(
                err instanceof Anthropic.InternalServerError,
                `expected Anthropic.InternalServerError, got ${err ? `${(err as Error).constructor.name} ${(err as any).status}` : 'success'}`,
              );
            else
              check(
                err instanceof OpenAI.InternalServerError,
                `expected OpenAI.InternalServerError, got ${err ? `${(err as Error).constructor.name} ${(err as any).status}` : 'success'}`,
              );
          }
          const recs = fakeOf(up).find(marker);
          expect(recs.map((r) => r.status)).toEqual([500, 500, 500]);
        },
      );
    });

    test('an upstream that sends no headers within timeout_ms is retried, then answered with 504', async () => {
      const cases = triples(CLIENTS, UPSTREAMS, [false, true]);
      await matrix(
        cases,
        ([cl, up, st]) => `${cl} → ${up} ${st ? 'stream' : 'json'}`,
        async ([client, up, stream]) => {
          const marker = newMarker('slowhdr');
          const started = Date.now();
          const err = await call(c, client, modelId(up, 'slow-headers'), { marker }, { stream }).then(
            () => undefined,
            (e: unknown) => e,
          );
          const took = Date.now() - started;
          check(
            err && (err as any).status === 504,
            `expected a 504, got ${err ? `${(err as Error).constructor.name} ${(err as any).status}` : 'success'}`,
          );
          check(took < 2_500, `the answer took ${took} ms (timeout_ms 500, max_retries 1)`);
          const recs = fakeOf(up).find(marker);
          expect(recs).toHaveLength(2);
          for (const r of recs) {
            const abortedAfter = await eventually(() => (r.abortedAt ? r.abortedAt - r.receivedAt : undefined), 1_000);
            check(
              abortedAfter !== undefined && abortedAfter >= 400 && abortedAfter < 1_000,
              `attempt aborted after ${abortedAfter} ms`,
            );
          }
        },
      );
    });
  });
}

/**
 * Fake LLM upstreams for integration tests: real HTTP servers on loopback that speak the
 * OpenAI chat-completions API (`POST /v1/chat/completions`) or the Anthropic Messages API
 * (`POST /v1/messages`), with the wire shapes of the real services byte for byte (SSE framing,
 * role-first deltas, tool-call deltas by index, the usage-only chunk, `data: [DONE]`;
 * message_start / ping / content_block_* / message_delta / message_stop).
 *
 * What a call does is chosen by a scenario named in the upstream model (`up-<scenario>`, or just
 * `<scenario>`), so every catalog model of a test config maps to one behaviour. Every request is
 * recorded (headers, JSON body, timings, whether the caller went away) so tests can assert what
 * the gateway sent upstream.
 *
 * Shapes follow the official SDKs' type definitions (node_modules/openai ChatCompletion /
 * ChatCompletionChunk, node_modules/@anthropic-ai/sdk Message / RawMessageStreamEvent) and the
 * public API references:
 * @see https://platform.openai.com/docs/api-reference/chat-streaming
 * @see https://docs.anthropic.com/en/docs/build-with-claude/streaming
 */

import { fakeCountTokens, fakeEmbeddings } from './fake-token-endpoints.ts';
import {
  type Emit,
  type RecordedBase,
  type RecordingServer,
  scriptedSse,
  startRecordingServer,
} from './fake-upstream-server.ts';

export type FakeKind = 'openai' | 'anthropic';

export const SCENARIOS = [
  /** The fixed sentence in 24 deltas; honours max_tokens and stop / stop_sequences. */
  'text',
  /** Two parallel tool calls (OpenAI: argument deltas interleave); answers tool results with text. */
  'tools',
  /** Text whose usage arrives only at the very end (Anthropic: message_start reports 0 input tokens). */
  'late-usage',
  /** A few deltas, then the API's own mid-stream error event. */
  'error-event',
  /** A few deltas, a line of garbage, then the rest and a normal ending. */
  'garbage',
  /** A few deltas, then the TCP connection is reset. */
  'cut',
  /** The first attempt of each distinct conversation gets 429, the next one succeeds (text). */
  'flaky-429',
  /** Always 500. */
  'always-500',
  /** First delta at once, then one every 100 ms for a minute. */
  'slow-stream',
  /** Response headers only after SLOW_HEADERS_MS. */
  'slow-headers',
  /** The text answer, its headers after LATE_HEADERS_MS: an upstream that thinks before it answers. */
  'late-headers',
  /** The text answer; streamed, silent for LONG_PAUSE_MS (fake-upstream-server.ts) after its third delta. */
  'long-pause',
  /**
   * The text answer without a response id, as some OpenAI-compatible servers send it (OpenAI:
   * no `id` in the body or any chunk; Anthropic: an empty `id`).
   */
  'no-ids',
  /**
   * `no-ids`, and the first event (a body: the top level) also carries a field nested
   * DEEP_NESTING levels deep: JSON.parse reads it, JSON.stringify cannot write it again.
   */
  'deep-no-ids',
  /**
   * The text answer whose body ends LATE_END_MS after its last event (`[DONE]`, `message_stop`),
   * the chunked terminator in a write of its own, as many servers send it.
   */
  'late-end',
  /** The text answer whose body never ends after its last event: the connection stays open until the caller leaves. */
  'stall-after-end',
  /**
   * Bytes without end until the caller leaves: streamed, one event and then an event that never
   * finishes; not streamed, a JSON body that never finishes.
   */
  'endless',
  /** Streamed: 200 with a JSON error body instead of an event stream (a server that cannot stream this model). */
  'json-to-stream',
  /** The text answer, but a request carrying `stream_options` is refused with 400 (as some Azure API versions do). */
  'no-stream-options',
  /** Responses: the text answer after two `web_search_call` items, when the request enables a web search tool. */
  'web-search',
] as const;

/** What `json-to-stream` answers a streaming request with (status 200, a JSON body). */
export const NO_STREAMING_MESSAGE = 'streaming is not supported for this model';

/** How deep `deep-no-ids` nests its extra field. */
export const DEEP_NESTING = 200_000;
const deepJson = () => `${'['.repeat(DEEP_NESTING)}${']'.repeat(DEEP_NESTING)}`;
export type Scenario = (typeof SCENARIOS)[number];

/** The text scenarios' answer, exactly as streamed (24 deltas = 24 output tokens). */
export const TEXT_DELTAS = [
  'The',
  ' quick',
  ' brown',
  ' fox',
  ' jumps',
  ' over',
  ' the',
  ' lazy',
  ' dog',
  ' while',
  ' the',
  ' patient',
  ' owl',
  ' watches',
  ' from',
  ' an',
  ' old',
  ' oak',
  ' tree',
  ' near',
  ' the',
  ' quiet',
  ' river',
  ' bank.',
];
export const FULL_TEXT = TEXT_DELTAS.join('');
/** Input tokens every fake answer reports: a figure no gateway-side estimate would produce. */
export const FAKE_INPUT_TOKENS = 1234;
export const SLOW_HEADERS_MS = 3_000;
export const LATE_HEADERS_MS = 150;
export const SLOW_STREAM_INTERVAL_MS = 100;
/** The tool calls of the `tools` scenario: tool 0 and tool 1 of the request (or tool 0 twice). */
export const TOOL_ARGS = [{ city: 'Paris' }, { city: 'Tokyo' }] as const;
/** The upstream answers with a dated variant of the model it was asked for, as the real APIs do. */
export const upstreamModelEcho = (requested: string) => `${requested}-2025-01-01`;

export interface RecordedRequest extends RecordedBase {
  kind: FakeKind;
  method: string;
}

export interface FakeLlmUpstream extends RecordingServer<RecordedRequest> {
  kind: FakeKind;
  apiKey: string;
}

export function scenarioOf(model: unknown): Scenario | undefined {
  if (typeof model !== 'string') return undefined;
  const name = model.replace(/^up-/, '');
  return (SCENARIOS as readonly string[]).includes(name) ? (name as Scenario) : undefined;
}

const now = () => Date.now();

/** An event's text with its response id gone: OpenAI chunks lose `id`, Anthropic's message_start gets `""`. */
function withoutResponseIds(text: string): string {
  return text.replaceAll(/"id":"chatcmpl-[^"]*",/g, '').replace(/("message":\{"id":)"msg_[^"]*"/, '$1""');
}

function randomId(length: number): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let out = '';
  for (const byte of crypto.getRandomValues(new Uint8Array(length))) out += alphabet[byte % alphabet.length];
  return out;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

// ---------------------------------------------------------------------------------------------
// What to say: one plan per request, rendered by either API's encoder.

type Block = { type: 'text'; deltas: string[] } | { type: 'tool'; id: string; name: string; pieces: string[] };

interface Plan {
  blocks: Block[];
  /** openai finish_reason vocabulary; mapped for Anthropic. */
  finish: 'stop' | 'length' | 'tool_calls';
  /** The stop sequence that ended the text, when one did. */
  stopSequence?: string;
  outputTokens: number;
  /** Where the scenario breaks the stream: after this many content deltas. */
  breakAfter?: number;
  /** Anthropic `web-search`: web searches (server_tool_use and its result) ahead of the answer. */
  searches?: number;
}

interface Normalized {
  maxTokens?: number;
  stops: string[];
  toolNames: string[];
  /** Texts of the tool results in the last message, when it carries any. */
  toolResults: string[];
  /** Anthropic: the request declares a web search tool. */
  webSearch?: boolean;
}

/** Cuts the sentence at the first stop sequence, then caps it at max_tokens deltas. */
function textPlan(deltas: string[], req: Normalized): Plan {
  const full = deltas.join('');
  let cut = full.length;
  let stopSequence: string | undefined;
  for (const stop of req.stops) {
    const at = stop ? full.indexOf(stop) : -1;
    if (at >= 0 && at < cut) {
      cut = at;
      stopSequence = stop;
    }
  }
  const kept: string[] = [];
  let offset = 0;
  for (const delta of deltas) {
    if (offset >= cut) break;
    kept.push(delta.slice(0, Math.max(0, cut - offset)));
    offset += delta.length;
  }
  const nonEmpty = kept.filter((d) => d.length > 0);
  if (req.maxTokens !== undefined && nonEmpty.length > req.maxTokens) {
    return {
      blocks: [{ type: 'text', deltas: nonEmpty.slice(0, req.maxTokens) }],
      finish: 'length',
      outputTokens: req.maxTokens,
    };
  }
  return { blocks: [{ type: 'text', deltas: nonEmpty }], finish: 'stop', stopSequence, outputTokens: nonEmpty.length };
}

function plan(kind: FakeKind, scenario: Scenario, req: Normalized): Plan {
  if (scenario === 'tools' && req.toolNames.length > 0 && req.toolResults.length === 0) {
    const idPrefix = kind === 'openai' ? 'call_' : 'toolu_01';
    const blocks: Block[] = [];
    if (kind === 'anthropic') blocks.push({ type: 'text', deltas: ['Checking', ' both.'] });
    TOOL_ARGS.forEach((args, i) => {
      const json = JSON.stringify(args); // {"city":"Paris"}
      const split = json.indexOf(':');
      blocks.push({
        type: 'tool',
        id: `${idPrefix}${randomId(24)}`,
        name: req.toolNames[i] ?? req.toolNames[0]!,
        pieces: [json.slice(0, split), json.slice(split, -2), json.slice(-2)],
      });
    });
    return {
      blocks,
      finish: 'tool_calls',
      outputTokens: blocks.reduce((n, b) => n + (b.type === 'text' ? b.deltas.length : b.pieces.length), 0),
    };
  }
  if (scenario === 'tools' && req.toolResults.length > 0) {
    const words = `Results: ${req.toolResults.join(' | ')}`.split(/(?= )/);
    return textPlan(words, req);
  }
  if (scenario === 'slow-stream')
    return textPlan(Array.from({ length: 25 }, () => TEXT_DELTAS).flat(), { ...req, stops: [] });
  const base = textPlan(TEXT_DELTAS, req);
  if (scenario === 'web-search' && kind === 'anthropic' && req.webSearch) return { ...base, searches: 2 };
  if (scenario === 'error-event' || scenario === 'garbage' || scenario === 'cut' || scenario === 'long-pause')
    return { ...base, breakAfter: 3 };
  return base;
}

// ---------------------------------------------------------------------------------------------
// Request reading and validation, as strict as the real APIs on the points a translator can miss.

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
  ) {
    super(message);
  }
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p: any) => (p?.type === 'text' ? String(p.text ?? '') : '')).join('');
  return '';
}

function readOpenAI(body: any): Normalized {
  if (!body || typeof body !== 'object') throw new HttpError(400, 'We could not parse the JSON body of your request.');
  if (typeof body.model !== 'string' || !body.model)
    throw new HttpError(400, 'you must provide a model parameter', 'model');
  if (!Array.isArray(body.messages) || body.messages.length === 0)
    throw new HttpError(400, "Invalid 'messages': empty array.", 'messages');
  if (body.stream_options != null && body.stream !== true) {
    throw new HttpError(
      400,
      "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
      'stream_options',
    );
  }
  let pendingIds: string[] = [];
  body.messages.forEach((m: any, i: number) => {
    if (!['system', 'developer', 'user', 'assistant', 'tool'].includes(m?.role))
      throw new HttpError(400, `Invalid value for 'messages[${i}].role'`, `messages[${i}].role`);
    if (m.role === 'assistant' && Array.isArray(m.tool_calls)) {
      m.tool_calls.forEach((tc: any, j: number) => {
        if (typeof tc?.id !== 'string' || !tc.id)
          throw new HttpError(
            400,
            `Missing 'messages[${i}].tool_calls[${j}].id'`,
            `messages[${i}].tool_calls[${j}].id`,
          );
        if (
          tc.type !== 'function' ||
          typeof tc.function?.name !== 'string' ||
          !tc.function.name ||
          typeof tc.function.arguments !== 'string'
        ) {
          throw new HttpError(400, `Invalid 'messages[${i}].tool_calls[${j}]'`, `messages[${i}].tool_calls[${j}]`);
        }
      });
      pendingIds = m.tool_calls.map((tc: any) => tc.id);
      return;
    }
    if (m.role === 'tool') {
      if (!pendingIds.includes(m.tool_call_id)) {
        throw new HttpError(
          400,
          `Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.`,
          `messages.[${i}].role`,
        );
      }
      return;
    }
    if (Array.isArray(m.content)) {
      m.content.forEach((p: any, j: number) => {
        if (!['text', 'image_url', 'input_audio', 'file', 'refusal'].includes(p?.type))
          throw new HttpError(400, `Invalid value: '${p?.type}'.`, `messages[${i}].content[${j}].type`);
        if (p.type === 'image_url' && typeof p.image_url?.url !== 'string')
          throw new HttpError(400, `Missing required parameter: 'messages[${i}].content[${j}].image_url.url'.`);
      });
    }
    pendingIds = [];
  });
  const last = body.messages.at(-1);
  const toolResults: string[] = [];
  for (let i = body.messages.length - 1; i >= 0 && body.messages[i].role === 'tool'; i--)
    toolResults.unshift(contentText(body.messages[i].content));
  const stop = body.stop;
  return {
    maxTokens: body.max_completion_tokens ?? body.max_tokens ?? undefined,
    stops: typeof stop === 'string' ? [stop] : Array.isArray(stop) ? stop : [],
    toolNames: Array.isArray(body.tools) ? body.tools.map((t: any) => t?.function?.name).filter(Boolean) : [],
    toolResults: last?.role === 'tool' ? toolResults : [],
  };
}

function readAnthropic(body: any): Normalized {
  if (!body || typeof body !== 'object') throw new HttpError(400, 'invalid request body');
  if (typeof body.model !== 'string' || !body.model) throw new HttpError(400, 'model: Field required');
  if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1) throw new HttpError(400, 'max_tokens: Field required');
  if (!Array.isArray(body.messages) || body.messages.length === 0)
    throw new HttpError(400, 'messages: at least one message is required');
  let previousToolUses: string[] = [];
  body.messages.forEach((m: any, i: number) => {
    if (m?.role !== 'user' && m?.role !== 'assistant')
      throw new HttpError(400, `messages.${i}.role: Input should be 'user' or 'assistant'`);
    const blocks: any[] =
      typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : Array.isArray(m.content) ? m.content : [];
    if (!blocks.length) throw new HttpError(400, `messages.${i}: content must be non-empty`);
    blocks.forEach((b, j) => {
      if (b?.type === 'tool_result' && !previousToolUses.includes(b.tool_use_id)) {
        throw new HttpError(
          400,
          `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${b.tool_use_id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
        );
      }
      if (
        b?.type === 'tool_use' &&
        (typeof b.id !== 'string' ||
          typeof b.name !== 'string' ||
          !b.name ||
          typeof b.input !== 'object' ||
          b.input === null)
      ) {
        throw new HttpError(400, `messages.${i}.content.${j}.tool_use: id, name and input are required`);
      }
      if (b?.type === 'image') {
        const s = b.source;
        const ok =
          s?.type === 'base64'
            ? typeof s.media_type === 'string' && typeof s.data === 'string'
            : s?.type === 'url' && typeof s.url === 'string';
        if (!ok) throw new HttpError(400, `messages.${i}.content.${j}.image.source: invalid image source`);
      }
      if (
        ![
          'text',
          'image',
          'document',
          'search_result',
          'tool_use',
          'tool_result',
          'thinking',
          'redacted_thinking',
        ].includes(b?.type)
      ) {
        throw new HttpError(400, `messages.${i}.content.${j}.type: unknown block type ${b?.type}`);
      }
    });
    previousToolUses = m.role === 'assistant' ? blocks.filter((b) => b.type === 'tool_use').map((b) => b.id) : [];
  });
  const last = body.messages.at(-1);
  const lastBlocks: any[] = Array.isArray(last.content) ? last.content : [];
  return {
    maxTokens: body.max_tokens,
    stops: Array.isArray(body.stop_sequences) ? body.stop_sequences : [],
    toolNames: Array.isArray(body.tools)
      ? body.tools.filter((t: any) => !t?.type || t.type === 'custom').map((t: any) => t?.name)
      : [],
    webSearch: Array.isArray(body.tools) && body.tools.some((t: any) => String(t?.type).startsWith('web_search_')),
    toolResults:
      last.role === 'user' ? lastBlocks.filter((b) => b.type === 'tool_result').map((b) => contentText(b.content)) : [],
  };
}

// ---------------------------------------------------------------------------------------------
// Error bodies in each API's shape.

function openaiError(
  status: number,
  message: string,
  type: string,
  code: string | null = null,
  param: string | null = null,
): Response {
  return Response.json(
    { error: { message, type, param, code } },
    { status, headers: { 'x-request-id': `req_${randomId(16)}` } },
  );
}

function anthropicError(status: number, type: string, message: string): Response {
  return Response.json(
    { type: 'error', error: { type, message } },
    { status, headers: { 'request-id': `req_${randomId(16)}` } },
  );
}

function errorFor(kind: FakeKind, status: number, message: string, param: string | null = null): Response {
  if (kind === 'openai') {
    const type = status === 429 ? 'requests' : status >= 500 ? 'server_error' : 'invalid_request_error';
    const code = status === 429 ? 'rate_limit_exceeded' : status === 401 ? 'invalid_api_key' : null;
    return openaiError(status, message, type, code, param);
  }
  const type =
    status === 429
      ? 'rate_limit_error'
      : status === 401
        ? 'authentication_error'
        : status === 529
          ? 'overloaded_error'
          : status >= 500
            ? 'api_error'
            : 'invalid_request_error';
  return anthropicError(status, type, message);
}

// ---------------------------------------------------------------------------------------------
// Rendering: non-streamed bodies and SSE event lists.

function openaiUsage(outputTokens: number) {
  return {
    prompt_tokens: FAKE_INPUT_TOKENS,
    completion_tokens: outputTokens,
    total_tokens: FAKE_INPUT_TOKENS + outputTokens,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

function openaiJson(body: any, p: Plan) {
  const text = p.blocks.flatMap((b) => (b.type === 'text' ? b.deltas : [])).join('');
  const tools = p.blocks.flatMap((b) => (b.type === 'tool' ? [b] : []));
  return {
    id: `chatcmpl-${randomId(29)}`,
    object: 'chat.completion',
    created: Math.floor(now() / 1000),
    model: upstreamModelEcho(body.model),
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: tools.length && !text ? null : text,
          refusal: null,
          annotations: [],
          ...(tools.length
            ? {
                tool_calls: tools.map((t) => ({
                  id: t.id,
                  type: 'function',
                  function: { name: t.name, arguments: t.pieces.join('') },
                })),
              }
            : {}),
        },
        logprobs: null,
        finish_reason: p.finish,
      },
    ],
    usage: openaiUsage(p.outputTokens),
    service_tier: 'default',
    system_fingerprint: 'fp_fake0001',
  };
}

function openaiEvents(body: any, p: Plan): Emit[] {
  const includeUsage = body.stream_options?.include_usage === true;
  const id = `chatcmpl-${randomId(29)}`;
  const created = Math.floor(now() / 1000);
  const model = upstreamModelEcho(body.model);
  const chunk = (delta: object, finish: string | null = null) =>
    `data: ${JSON.stringify({
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      service_tier: 'default',
      system_fingerprint: 'fp_fake0001',
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      ...(includeUsage ? { usage: null } : {}),
    })}\n\n`;
  const out: Emit[] = [{ text: chunk({ role: 'assistant', content: '', refusal: null }) }];
  const text = p.blocks.flatMap((b) => (b.type === 'text' ? b.deltas : []));
  for (const d of text) out.push({ text: chunk({ content: d }), content: true });
  const tools = p.blocks.flatMap((b) => (b.type === 'tool' ? [b] : []));
  // Parallel tool calls: every call opens (id, type, name, empty arguments), then the argument
  // pieces of the calls interleave: call 0 piece 0, call 1 piece 0, call 0 piece 1, …
  tools.forEach((t, index) => {
    out.push({
      text: chunk({ tool_calls: [{ index, id: t.id, type: 'function', function: { name: t.name, arguments: '' } }] }),
      content: true,
    });
  });
  const longest = Math.max(0, ...tools.map((t) => t.pieces.length));
  for (let k = 0; k < longest; k++) {
    tools.forEach((t, index) => {
      const piece = t.pieces[k];
      if (piece !== undefined)
        out.push({ text: chunk({ tool_calls: [{ index, function: { arguments: piece } }] }), content: true });
    });
  }
  out.push({ text: chunk({}, p.finish) });
  if (includeUsage) {
    out.push({
      text: `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, service_tier: 'default', system_fingerprint: 'fp_fake0001', choices: [], usage: openaiUsage(p.outputTokens) })}\n\n`,
    });
  }
  out.push({ text: 'data: [DONE]\n\n' });
  return out;
}

const anthropicStop = (p: Plan) =>
  p.finish === 'tool_calls'
    ? 'tool_use'
    : p.finish === 'length'
      ? 'max_tokens'
      : p.stopSequence
        ? 'stop_sequence'
        : 'end_turn';

function anthropicUsage(input: number, output: number) {
  return {
    input_tokens: input,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    output_tokens: output,
    service_tier: 'standard',
  };
}

/** A web search's two blocks, as Anthropic writes them ahead of the answer. */
function searchBlocks(p: Plan): any[] {
  return Array.from({ length: p.searches ?? 0 }, () => {
    const id = `srvtoolu_01${randomId(22)}`;
    return [
      { type: 'server_tool_use', id, name: 'web_search', input: { query: 'grass colour' } },
      {
        type: 'web_search_tool_result',
        tool_use_id: id,
        content: [
          {
            type: 'web_search_result',
            url: 'https://example.com/grass',
            title: 'Grass',
            encrypted_content: 'ZmFrZQ==',
            page_age: null,
          },
        ],
      },
    ];
  }).flat();
}

/** `usage.server_tool_use` of a plan with searches. */
const serverToolUse = (p: Plan) => (p.searches ? { server_tool_use: { web_search_requests: p.searches } } : {});

function anthropicJson(body: any, p: Plan) {
  return {
    id: `msg_01${randomId(22)}`,
    type: 'message',
    role: 'assistant',
    model: upstreamModelEcho(body.model),
    content: [
      ...searchBlocks(p),
      ...p.blocks.map((b) =>
        b.type === 'text'
          ? { type: 'text', text: b.deltas.join('') }
          : { type: 'tool_use', id: b.id, name: b.name, input: JSON.parse(b.pieces.join('')) },
      ),
    ],
    stop_reason: anthropicStop(p),
    stop_sequence: p.stopSequence ?? null,
    usage: { ...anthropicUsage(FAKE_INPUT_TOKENS, p.outputTokens), ...serverToolUse(p) },
  };
}

function anthropicEvents(body: any, p: Plan, scenario: Scenario): Emit[] {
  const ev = (name: string, data: object) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
  const late = scenario === 'late-usage';
  const out: Emit[] = [
    {
      text: ev('message_start', {
        type: 'message_start',
        message: {
          id: `msg_01${randomId(22)}`,
          type: 'message',
          role: 'assistant',
          model: upstreamModelEcho(body.model),
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: anthropicUsage(late ? 0 : FAKE_INPUT_TOKENS, 1),
        },
      }),
    },
  ];
  const searches = searchBlocks(p);
  searches.forEach((block, index) => {
    const start = block.type === 'server_tool_use' ? { ...block, input: {} } : block;
    out.push({ text: ev('content_block_start', { type: 'content_block_start', index, content_block: start }) });
    if (block.type === 'server_tool_use')
      out.push({
        text: ev('content_block_delta', {
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) },
        }),
      });
    out.push({ text: ev('content_block_stop', { type: 'content_block_stop', index }) });
  });
  p.blocks.forEach((b, at) => {
    const index = at + searches.length;
    if (b.type === 'text') {
      out.push({
        text: ev('content_block_start', {
          type: 'content_block_start',
          index,
          content_block: { type: 'text', text: '' },
        }),
      });
      if (index === 0) out.push({ text: ev('ping', { type: 'ping' }) });
      for (const d of b.deltas)
        out.push({
          text: ev('content_block_delta', {
            type: 'content_block_delta',
            index,
            delta: { type: 'text_delta', text: d },
          }),
          content: true,
        });
    } else {
      out.push({
        text: ev('content_block_start', {
          type: 'content_block_start',
          index,
          content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} },
        }),
      });
      if (index === 0) out.push({ text: ev('ping', { type: 'ping' }) });
      out.push({
        text: ev('content_block_delta', {
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json: '' },
        }),
      });
      for (const piece of b.pieces)
        out.push({
          text: ev('content_block_delta', {
            type: 'content_block_delta',
            index,
            delta: { type: 'input_json_delta', partial_json: piece },
          }),
          content: true,
        });
    }
    out.push({ text: ev('content_block_stop', { type: 'content_block_stop', index }) });
  });
  const usage = late
    ? {
        input_tokens: FAKE_INPUT_TOKENS,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        output_tokens: p.outputTokens,
      }
    : { output_tokens: p.outputTokens, ...serverToolUse(p) };
  out.push({
    text: ev('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: anthropicStop(p), stop_sequence: p.stopSequence ?? null },
      usage,
    }),
  });
  out.push({ text: ev('message_stop', { type: 'message_stop' }) });
  return out;
}

/** What a misbehaving proxy might inject: a truncated event, then an HTML error page as data. */
const GARBAGE: Record<FakeKind, string> = {
  openai:
    'data: {"id":"chatcmpl-oops","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"x"\n\ndata: <html><body>502 Bad Gateway</body></html>\n\n',
  anthropic:
    'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_d\n\nevent: content_block_delta\ndata: <html><body>502 Bad Gateway</body></html>\n\n',
};

function midStreamError(kind: FakeKind): string {
  return kind === 'openai'
    ? `data: ${JSON.stringify({ error: { message: 'The server had an error while processing your request. Sorry about that!', type: 'server_error', param: null, code: null } })}\n\n`
    : `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })}\n\n`;
}

// ---------------------------------------------------------------------------------------------

export async function startFakeLlmUpstream(kind: FakeKind, opts: { apiKey?: string } = {}): Promise<FakeLlmUpstream> {
  const apiKey = opts.apiKey ?? `fake-${kind}-key`;
  const path = kind === 'openai' ? '/v1/chat/completions' : '/v1/messages';
  const requestIdHeader = (): Record<string, string> => ({
    [kind === 'openai' ? 'x-request-id' : 'request-id']: `req_${randomId(16)}`,
  });

  const handle = async (req: Request, rec: RecordedRequest): Promise<Response> => {
    const other = kind === 'openai' ? '/v1/embeddings' : '/v1/messages/count_tokens';
    if (req.method !== 'POST' || (rec.path !== path && rec.path !== other))
      return errorFor(kind, 404, `Unknown request URL: ${req.method} ${rec.path}`);
    if (kind === 'openai' && rec.headers.authorization !== `Bearer ${apiKey}`)
      return errorFor(kind, 401, 'Incorrect API key provided.');
    if (kind === 'anthropic') {
      // The API takes `x-api-key` (and newer SDKs send a Bearer token instead).
      if (rec.headers['x-api-key'] !== apiKey && rec.headers.authorization !== `Bearer ${apiKey}`)
        return errorFor(kind, 401, 'invalid x-api-key');
      if (!rec.headers['anthropic-version']) return errorFor(kind, 400, 'anthropic-version: header is required');
    }
    if (rec.body === undefined) return errorFor(kind, 400, 'We could not parse the JSON body of your request.');
    if (rec.path === other) {
      const fail = (status: number, message: string, param?: string | null) => errorFor(kind, status, message, param);
      return kind === 'openai'
        ? fakeEmbeddings(rec.body, rec.scenario, fail)
        : fakeCountTokens(rec.body, rec.scenario, fail);
    }
    let norm: Normalized;
    try {
      norm = kind === 'openai' ? readOpenAI(rec.body) : readAnthropic(rec.body);
    } catch (err) {
      if (err instanceof HttpError) return errorFor(kind, err.status, err.message, err.param);
      throw err;
    }
    const scenario = rec.scenario;
    if (!scenario)
      return errorFor(
        kind,
        404,
        `The model \`${String(rec.body.model)}\` does not exist or you do not have access to it.`,
      );
    if (scenario === 'always-500')
      return errorFor(
        kind,
        500,
        kind === 'openai'
          ? 'The server had an error while processing your request. Sorry about that!'
          : 'Internal server error',
      );
    if (scenario === 'flaky-429' && rec.attempt % 2 === 1) {
      return errorFor(
        kind,
        429,
        kind === 'openai'
          ? 'Rate limit reached for requests. Please try again in 20ms.'
          : 'Number of request tokens has exceeded your per-minute rate limit',
      );
    }
    if (scenario === 'slow-headers' || scenario === 'late-headers') {
      await sleep(scenario === 'slow-headers' ? SLOW_HEADERS_MS : LATE_HEADERS_MS, req.signal);
      if (req.signal.aborted) {
        rec.abortedAt ??= now();
        return new Response(null, { status: 499 });
      }
    }
    if (scenario === 'endless') return endlessBody(rec, req, kind, rec.body.stream === true);
    if (scenario === 'no-stream-options' && kind === 'openai' && rec.body.stream_options !== undefined)
      return errorFor(kind, 400, 'Unrecognized request argument supplied: stream_options');
    if (scenario === 'json-to-stream' && rec.body.stream === true)
      return Response.json({ error: { message: NO_STREAMING_MESSAGE, type: 'invalid_request_error' } });
    const p = plan(kind, scenario, norm);
    if (rec.body.stream === true) {
      const events = kind === 'openai' ? openaiEvents(rec.body, p) : anthropicEvents(rec.body, p, scenario);
      if (scenario === 'no-ids' || scenario === 'deep-no-ids')
        for (const e of events) e.text = withoutResponseIds(e.text);
      const first = events[0];
      if (scenario === 'deep-no-ids' && first)
        first.text = first.text.replace(/\}\n\n$/, `,"x_deep":${deepJson()}}\n\n`);
      return scriptedSse(rec, req, events, {
        scenario,
        breakAfter: p.breakAfter,
        errorEvent: midStreamError(kind),
        garbage: GARBAGE[kind],
        headers: requestIdHeader(),
        slowIntervalMs: SLOW_STREAM_INTERVAL_MS,
      });
    }
    if (scenario === 'error-event')
      return errorFor(
        kind,
        kind === 'openai' ? 500 : 529,
        kind === 'openai' ? 'The server had an error while processing your request.' : 'Overloaded',
      );
    if (scenario === 'garbage')
      return new Response('<html><body>502 Bad Gateway</body></html>', {
        status: 200,
        headers: { 'content-type': 'application/json' },
      });
    const json: Record<string, unknown> = kind === 'openai' ? openaiJson(rec.body, p) : anthropicJson(rec.body, p);
    if (scenario === 'no-ids' || scenario === 'deep-no-ids') {
      if (kind === 'openai') delete json.id;
      else json.id = '';
    }
    const text = JSON.stringify(json);
    return new Response(scenario === 'deep-no-ids' ? text.replace(/\}$/, `,"x_deep":${deepJson()}}`) : text, {
      headers: { 'content-type': 'application/json', ...requestIdHeader() },
    });
  };

  const server = startRecordingServer<RecordedRequest>({
    conversationOf: (body) => body?.messages,
    scenarioOf: (body) => scenarioOf((body as { model?: unknown } | undefined)?.model),
    record: (base, req) => ({ ...base, kind, method: req.method }),
    handle,
  });
  return { kind, apiKey, ...server };
}

/** `endless`: 64 KiB writes of one JSON string that never closes, after one real event when streamed. */
function endlessBody(rec: RecordedBase, req: Request, kind: FakeKind, stream: boolean): Response {
  const enc = new TextEncoder();
  const piece = enc.encode('x'.repeat(64 * 1024));
  const first = stream
    ? kind === 'openai'
      ? `data: {"id":"chatcmpl-endless","object":"chat.completion.chunk","created":1,"model":"up-endless","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}\n\ndata: {"choices":[{"index":0,"delta":{"content":"`
      : `event: message_start\ndata: {"type":"message_start","message":{"id":"msg_endless","type":"message","role":"assistant","model":"up-endless","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}\n\nevent: ping\ndata: {"type":"ping","text":"`
    : '{"id":"endless","text":"';
  let started = false;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (req.signal.aborted) return;
      rec.firstByteAt ??= now();
      if (!started) {
        started = true;
        controller.enqueue(enc.encode(first));
      } else controller.enqueue(piece);
    },
    cancel() {
      rec.abortedAt ??= now();
    },
  });
  req.signal.addEventListener('abort', () => (rec.abortedAt ??= now()), { once: true });
  return new Response(body, {
    headers: { 'content-type': stream ? 'text/event-stream' : 'application/json' },
  });
}

/**
 * The catalog entry of a model served by a fake upstream's `scenario` (as the gateway config's
 * `models[]` takes it): id `<provider>/<scenario>`, upstream model `up-<scenario>`, $1 in / $2 out
 * per million tokens.
 */
export function scenarioModel(provider: string, scenario: Scenario, displayName = `${provider} ${scenario}`) {
  return {
    id: `${provider}/${scenario}`,
    category: 'llm',
    upstream_model: `up-${scenario}`,
    display_name: displayName,
    context_length: 128000,
    max_output: 16384,
    pricing: { input_per_mtok: 1.0, output_per_mtok: 2.0 },
  };
}

/** Polls until `check` returns a value (not undefined) or the time is up; returns the last result. */
export async function eventually<T>(
  check: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 3_000,
  stepMs = 20,
): Promise<T | undefined> {
  const deadline = now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined || now() > deadline) return value;
    await Bun.sleep(stepMs);
  }
}

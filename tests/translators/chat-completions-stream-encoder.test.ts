import { describe, expect, test } from 'bun:test';
import OpenAI from 'openai';
import type { StreamEvent } from '../../translators/canonical/stream.ts';
import {
  chatErrorEvent,
  createChatStreamDecoder,
  createChatStreamEncoder,
  encodeChatResponse,
  type ChatStreamEncoderOptions,
} from '../../translators/chat-completions/index.ts';
import { parseSseBytes } from '../../translators/common/sse.ts';
import { toTransformStream } from '../../translators/common/stream-translator.ts';
import { collect, replayBytes, SPLITS } from '../helpers/replay-sse.ts';

const OPTS: ChatStreamEncoderOptions = {
  id: 'chatcmpl-gw1',
  model: 'acme/chat-large',
  created: 1700000000,
  includeUsage: false,
};

async function encode(events: StreamEvent[], opts: ChatStreamEncoderOptions = OPTS): Promise<string> {
  const input = new ReadableStream<StreamEvent>({
    start(controller) {
      for (const event of events) controller.enqueue(event);
      controller.close();
    },
  });
  return (await collect(input.pipeThrough(toTransformStream(createChatStreamEncoder(opts))))).join('');
}

/** The SSE text as parsed `data:` payloads ('[DONE]' kept as text). */
function frames(text: string): unknown[] {
  expect(text.endsWith('\n\n')).toBe(true);
  return text
    .slice(0, -2)
    .split('\n\n')
    .map((frame) => {
      expect(frame).toStartWith('data: ');
      expect(frame.includes('\n')).toBe(false);
      const data = frame.slice(6);
      return data === '[DONE]' ? data : JSON.parse(data);
    });
}

const start: StreamEvent = { type: 'message-start', id: 'msg_upstream', model: 'upstream-model', created: 1 };
const usage = { inputTokens: 5, outputTokens: 3, totalTokens: 8 };
const TEXT: StreamEvent[] = [
  start,
  { type: 'text-start', index: 0 },
  { type: 'text-delta', index: 0, delta: 'Hello' },
  { type: 'text-delta', index: 0, delta: ' wörld' },
  { type: 'text-end', index: 0 },
  { type: 'finish', finishReason: { unified: 'stop' }, usage },
];
const TOOLS: StreamEvent[] = [
  { ...start, usage: { inputTokens: 20, cachedInputTokens: 16 } },
  { type: 'text-start', index: 0 },
  { type: 'text-delta', index: 0, delta: 'Checking.' },
  { type: 'text-end', index: 0 },
  { type: 'tool-call-start', index: 1, id: 'call_a', name: 'get_weather' },
  { type: 'tool-call-start', index: 2, id: 'call_b', name: 'get_time' },
  { type: 'tool-call-delta', index: 1, delta: '{"city":' },
  { type: 'tool-call-delta', index: 2, delta: '{"tz":"UTC"}' },
  { type: 'tool-call-delta', index: 1, delta: '"Paris"}' },
  { type: 'tool-call-start', index: 3, id: 'call_c', name: 'get_weather' },
  { type: 'tool-call-delta', index: 3, delta: '{"city":"Oslo"}' },
  { type: 'tool-call-end', index: 2 },
  { type: 'tool-call-end', index: 1 },
  { type: 'tool-call-end', index: 3 },
  {
    type: 'finish',
    finishReason: { unified: 'tool-calls', raw: 'tool_use' },
    usage: { inputTokens: 20, outputTokens: 9, totalTokens: 29 },
  },
];

const base = { id: 'chatcmpl-gw1', object: 'chat.completion.chunk', created: 1700000000, model: 'acme/chat-large' };
const choice = (delta: object, finish: string | null = null) => ({
  index: 0,
  delta,
  logprobs: null,
  finish_reason: finish,
});

/** An openai SDK client whose every request is answered with `body` as an event stream. */
function sdkOver(body: string): OpenAI {
  return new OpenAI({
    apiKey: 'k',
    baseURL: 'http://gateway.test/v1',
    maxRetries: 0,
    fetch: async () => new Response(body, { headers: { 'content-type': 'text/event-stream' } }),
  });
}

describe('createChatStreamEncoder', () => {
  test('the exact SSE text of a text completion, without usage', async () => {
    const expected = [
      { ...base, choices: [choice({ role: 'assistant', content: '', refusal: null })] },
      { ...base, choices: [choice({ content: 'Hello' })] },
      { ...base, choices: [choice({ content: ' wörld' })] },
      { ...base, choices: [choice({}, 'stop')] },
    ];
    expect(await encode(TEXT)).toBe(
      `${expected.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join('')}data: [DONE]\n\n`,
    );
  });

  test('include_usage: "usage": null on every chunk, then a choices: [] chunk with the usage', async () => {
    const got = frames(await encode(TEXT, { ...OPTS, includeUsage: true }));
    expect(got).toEqual([
      { ...base, choices: [choice({ role: 'assistant', content: '', refusal: null })], usage: null },
      { ...base, choices: [choice({ content: 'Hello' })], usage: null },
      { ...base, choices: [choice({ content: ' wörld' })], usage: null },
      { ...base, choices: [choice({}, 'stop')], usage: null },
      { ...base, choices: [], usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 } },
      '[DONE]',
    ]);
  });

  test('parallel tool calls: indices 0, 1, 2 among tool calls (not block indices); id, type and name only first', async () => {
    const got = frames(await encode(TOOLS, { ...OPTS, includeUsage: true }));
    const call = (index: number, id: string, name: string) => ({
      tool_calls: [{ index, id, type: 'function', function: { name, arguments: '' } }],
    });
    const args = (index: number, text: string) => ({ tool_calls: [{ index, function: { arguments: text } }] });
    expect(got).toEqual([
      { ...base, choices: [choice({ role: 'assistant', content: '', refusal: null })], usage: null },
      { ...base, choices: [choice({ content: 'Checking.' })], usage: null },
      { ...base, choices: [choice(call(0, 'call_a', 'get_weather'))], usage: null },
      { ...base, choices: [choice(call(1, 'call_b', 'get_time'))], usage: null },
      { ...base, choices: [choice(args(0, '{"city":'))], usage: null },
      { ...base, choices: [choice(args(1, '{"tz":"UTC"}'))], usage: null },
      { ...base, choices: [choice(args(0, '"Paris"}'))], usage: null },
      { ...base, choices: [choice(call(2, 'call_c', 'get_weather'))], usage: null },
      { ...base, choices: [choice(args(2, '{"city":"Oslo"}'))], usage: null },
      { ...base, choices: [choice({}, 'tool_calls')], usage: null },
      {
        ...base,
        choices: [],
        usage: {
          prompt_tokens: 20,
          completion_tokens: 9,
          total_tokens: 29,
          prompt_tokens_details: { cached_tokens: 16 },
        },
      },
      '[DONE]',
    ]);
  });

  test('finish reasons: length and content_filter', async () => {
    for (const [unified, chat] of [
      ['length', 'length'],
      ['content-filter', 'content_filter'],
      ['stop-sequence', 'stop'],
    ] as const) {
      const got = frames(await encode([...TEXT.slice(0, -1), { type: 'finish', finishReason: { unified }, usage }]));
      expect(got.at(-2)).toEqual({ ...base, choices: [choice({}, chat)] });
    }
  });

  test('an error becomes the error chunk and the stream ends without [DONE]', async () => {
    const text = await encode([
      start,
      { type: 'text-start', index: 0 },
      { type: 'text-delta', index: 0, delta: 'Part' },
      { type: 'error', error: { code: 'upstream_error', message: 'upstream went away' } },
      { type: 'text-end', index: 0 },
      { type: 'finish', finishReason: { unified: 'stop' }, usage },
    ]);
    expect(frames(text).slice(2)).toEqual([
      { error: { message: 'upstream went away', type: 'server_error', param: null, code: 'upstream_error' } },
    ]);
    expect(text).not.toContain('[DONE]');
    expect(chatErrorEvent({ code: 'x', message: 'y' })).toBe(
      'data: {"error":{"message":"y","type":"server_error","param":null,"code":"x"}}\n\n',
    );
  });

  test('an input that ends without finish ends with stream_truncated; an error first thing is alone', async () => {
    const got = frames(await encode(TEXT.slice(0, 3)));
    expect(got.at(-1)).toEqual({
      error: {
        message: 'the stream ended before the completion was complete',
        type: 'server_error',
        param: null,
        code: 'stream_truncated',
      },
    });
    expect(got).not.toContain('[DONE]');
    expect(frames(await encode([{ type: 'error', error: { code: 'upstream_error', message: 'no' } }]))).toHaveLength(1);
  });

  test('events before message-start still open with the role chunk', async () => {
    const got = frames(await encode(TEXT.slice(1)));
    expect(got[0]).toEqual({ ...base, choices: [choice({ role: 'assistant', content: '', refusal: null })] });
    expect(got).toHaveLength(5);
  });

  test('round trip: the stream decoder reads back the same events under every split', async () => {
    /**
     * What the decoder gives back: the encoder's id and created, tool calls ended at the finish,
     * the usage chunk's report as it comes, and usage folded into the finish.
     */
    const readBack = (events: StreamEvent[], raw: string, finishUsage: object): StreamEvent[] => {
      const finish = events.at(-1) as Extract<StreamEvent, { type: 'finish' }>;
      const ends = events.filter((e) => e.type === 'tool-call-end').sort((a, b) => a.index - b.index);
      const usage = { ...finish.usage, ...finishUsage };
      return [
        { type: 'message-start', id: 'chatcmpl-gw1', model: 'acme/chat-large', created: 1700000000 },
        ...events.slice(1, -1).filter((e) => e.type !== 'tool-call-end' && e.type !== 'usage'),
        ...ends,
        { type: 'usage', usage },
        { type: 'finish', finishReason: { unified: finish.finishReason.unified, raw }, usage },
      ];
    };
    const cases: Array<[StreamEvent[], StreamEvent[]]> = [
      [TEXT, readBack(TEXT, 'stop', {})],
      [TOOLS, readBack(TOOLS, 'tool_calls', { cachedInputTokens: 16 })],
    ];
    for (const [events, expected] of cases) {
      const bytes = new TextEncoder().encode(await encode(events, { ...OPTS, includeUsage: true }));
      for (const split of Object.values(SPLITS)) {
        const back = await collect(
          parseSseBytes(replayBytes(bytes, split)).pipeThrough(
            toTransformStream(createChatStreamDecoder({ model: 'acme/chat-large' })),
          ),
        );
        expect(back).toEqual(expected);
      }
    }
  });

  test('openai SDK: chat.completions.stream() gives the expected final completion', async () => {
    const stream = sdkOver(await encode(TOOLS, { ...OPTS, includeUsage: true })).chat.completions.stream({
      model: 'acme/chat-large',
      messages: [{ role: 'user', content: 'hi' }],
      stream_options: { include_usage: true },
    });
    const argDeltas: Array<[number, string]> = [];
    // The SDK also reports the empty `arguments` of each call's first piece; only real pieces count here.
    stream.on(
      'tool_calls.function.arguments.delta',
      (e) => e.arguments_delta && argDeltas.push([e.index, e.arguments_delta]),
    );
    const final = await stream.finalChatCompletion();
    expect(final).toEqual({
      id: 'chatcmpl-gw1',
      object: 'chat.completion',
      created: 1700000000,
      model: 'acme/chat-large',
      usage: {
        prompt_tokens: 20,
        completion_tokens: 9,
        total_tokens: 29,
        prompt_tokens_details: { cached_tokens: 16 },
      },
      choices: [
        {
          index: 0,
          finish_reason: 'tool_calls',
          logprobs: null,
          message: {
            role: 'assistant',
            content: 'Checking.',
            refusal: null,
            parsed: null,
            tool_calls: [
              { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
              { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{"tz":"UTC"}' } },
              { id: 'call_c', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
            ],
          },
        },
      ],
    } as unknown as typeof final);
    expect(argDeltas).toEqual([
      [0, '{"city":'],
      [1, '{"tz":"UTC"}'],
      [0, '"Paris"}'],
      [2, '{"city":"Oslo"}'],
    ]);
  });

  test('openai SDK: the streamed completion equals the non-stream encoding of the same response', async () => {
    const final = await sdkOver(await encode(TEXT))
      .chat.completions.stream({ model: 'm', messages: [{ role: 'user', content: 'hi' }] })
      .finalChatCompletion();
    const plain = encodeChatResponse(
      {
        id: 'x',
        model: 'acme/chat-large',
        created: 0,
        content: [{ type: 'text', text: 'Hello wörld' }],
        finishReason: { unified: 'stop' },
        usage,
      },
      OPTS,
    );
    expect(final.choices[0]?.message.content).toBe(plain.choices[0]!.message.content);
    expect(final.choices[0]?.finish_reason).toBe(plain.choices[0]!.finish_reason);
    expect(final.usage).toBeUndefined();
  });

  test('openai SDK: iterating create({stream: true}) sees every chunk; an error chunk throws APIError', async () => {
    const chunks = [];
    for await (const chunk of await sdkOver(
      await encode(TEXT, { ...OPTS, includeUsage: true }),
    ).chat.completions.create({ model: 'm', messages: [], stream: true }))
      chunks.push(chunk);
    expect(chunks).toHaveLength(5);
    expect(chunks.at(-1)?.usage?.total_tokens).toBe(8);

    const body = await encode([
      start,
      { type: 'text-start', index: 0 },
      { type: 'text-delta', index: 0, delta: 'x' },
      { type: 'error', error: { code: 'stream_truncated', message: 'the upstream stream ended early' } },
    ]);
    const stream = sdkOver(body).chat.completions.stream({ model: 'm', messages: [] });
    const failure = await stream.finalChatCompletion().catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect((failure as InstanceType<typeof OpenAI.APIError>).message).toContain('the upstream stream ended early');
    expect((failure as InstanceType<typeof OpenAI.APIError>).code).toBe('stream_truncated');
  });
});

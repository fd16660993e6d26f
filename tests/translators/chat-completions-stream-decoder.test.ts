import { describe, expect, test } from 'bun:test';
import type { StreamEvent } from '../../translators/canonical/stream.ts';
import { createChatStreamDecoder } from '../../translators/chat-completions/index.ts';
import { parseSseBytes } from '../../translators/common/sse.ts';
import { toTransformStream } from '../../translators/common/stream-translator.ts';
import { collect, readFixture, replayBytes, SPLITS } from '../helpers/replay-sse.ts';

const FIXTURES = `${import.meta.dir}/../fixtures/chat-completions`;
const MODEL = 'acme/chat-large';
const WHOLE = [Number.MAX_SAFE_INTEGER];

async function decode(bytes: Uint8Array, split: number[], created?: number): Promise<StreamEvent[]> {
  return collect(
    parseSseBytes(replayBytes(bytes, split)).pipeThrough(
      toTransformStream(createChatStreamDecoder({ model: MODEL, created })),
    ),
  );
}

const start = (id: string, created: number): StreamEvent => ({ type: 'message-start', id, model: MODEL, created });
const usage = (input: number, output: number, cached?: number, reasoning?: number) => ({
  inputTokens: input,
  outputTokens: output,
  totalTokens: input + output,
  ...(cached !== undefined ? { cachedInputTokens: cached } : {}),
  ...(reasoning !== undefined ? { reasoningTokens: reasoning } : {}),
});
const MINTED = expect.stringMatching(/^call_[0-9a-zA-Z]{24}$/) as unknown as string;

const EXPECTED: Record<string, StreamEvent[]> = {
  'text.sse': [
    start('chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT', 1741569952),
    { type: 'text-start', index: 0 },
    { type: 'text-delta', index: 0, delta: 'Hi' },
    { type: 'text-delta', index: 0, delta: ' there' },
    { type: 'text-delta', index: 0, delta: '! Café ☕ is' },
    { type: 'text-delta', index: 0, delta: ' open' },
    { type: 'text-delta', index: 0, delta: ' until 9.' },
    { type: 'text-end', index: 0 },
    { type: 'usage', usage: usage(37, 11, 0, 0) },
    { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(37, 11, 0, 0) },
  ],
  'parallel-tool-calls.sse': [
    start('chatcmpl-BC7ZxQ2fT4pLk1s9nW3vYh6RmA0e', 1742398810),
    { type: 'text-start', index: 0 },
    { type: 'text-delta', index: 0, delta: 'Checking' },
    { type: 'text-delta', index: 0, delta: ' both cities.' },
    { type: 'text-end', index: 0 },
    { type: 'tool-call-start', index: 1, id: 'call_Paris01', name: 'get_weather' },
    { type: 'tool-call-delta', index: 1, delta: '{"location":' },
    { type: 'tool-call-start', index: 2, id: 'call_Tokyo02', name: 'get_weather' },
    { type: 'tool-call-delta', index: 2, delta: '{"location":' },
    { type: 'tool-call-delta', index: 2, delta: '"Tokyo, Japan"}' },
    { type: 'tool-call-delta', index: 1, delta: '"Paris, France"}' },
    { type: 'tool-call-start', index: 3, id: 'call_Time03', name: 'get_time' },
    { type: 'tool-call-delta', index: 3, delta: '{"tz":"Asia/Tokyo"}' },
    { type: 'tool-call-end', index: 1 },
    { type: 'tool-call-end', index: 2 },
    { type: 'tool-call-end', index: 3 },
    { type: 'usage', usage: usage(82, 46, 64, 0) },
    { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: usage(82, 46, 64, 0) },
  ],
  'length.sse': [
    start('chatcmpl-BD1aa2Kq9TnWm4Xc8Ls0Pv3Yb7Rz', 1742400000),
    { type: 'text-start', index: 0 },
    { type: 'text-delta', index: 0, delta: 'Once upon' },
    { type: 'text-delta', index: 0, delta: ' a time' },
    { type: 'text-end', index: 0 },
    { type: 'usage', usage: usage(12, 16, 0, 0) },
    { type: 'finish', finishReason: { unified: 'length', raw: 'length' }, usage: usage(12, 16, 0, 0) },
  ],
  'reasoning-no-done.sse': [
    start('chatcmpl-9f3c2a1b7d6e4f5a8b9c0d1e2f3a4b5c', 1742401234),
    { type: 'reasoning-start', index: 0 },
    { type: 'reasoning-delta', index: 0, delta: 'The user asks 6×7.' },
    { type: 'reasoning-end', index: 0 },
    { type: 'text-start', index: 1 },
    { type: 'text-delta', index: 1, delta: '42' },
    { type: 'text-delta', index: 1, delta: '.' },
    { type: 'text-end', index: 1 },
    { type: 'usage', usage: usage(20, 140, 0, 128) },
    { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(20, 140, 0, 128) },
  ],
  'compat-tool-call.sse': [
    start('chatcmpl-x7GqV0cL2sZp', 1742405555),
    { type: 'tool-call-start', index: 0, id: MINTED, name: 'search_docs' },
    { type: 'tool-call-delta', index: 0, delta: '{"query":"naïve \\"quotes\\"' },
    { type: 'tool-call-delta', index: 0, delta: ' — done"}' },
    { type: 'tool-call-end', index: 0 },
    { type: 'usage', usage: usage(55, 19) },
    { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: usage(55, 19) },
  ],
  'refusal.sse': [
    start('chatcmpl-BH5ee6Ou3XrAq8Bg2Pw4Tz7Cf1Vd', 1742440000),
    { type: 'text-start', index: 0 },
    { type: 'text-delta', index: 0, delta: "I'm sorry," },
    { type: 'text-delta', index: 0, delta: " I can't help with that." },
    { type: 'text-end', index: 0 },
    { type: 'usage', usage: usage(30, 9, 0, 0) },
    { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(30, 9, 0, 0) },
  ],
  'error-midstream.sse': [
    start('chatcmpl-BE2bb3Lr0UoXn5Yd9Mt1Qw4Zc8Sa', 1742410000),
    { type: 'text-start', index: 0 },
    { type: 'text-delta', index: 0, delta: 'Partial' },
    { type: 'text-delta', index: 0, delta: ' answer' },
    {
      type: 'error',
      error: {
        code: 'upstream_error',
        message: 'The server had an error while processing your request. Sorry about that!',
      },
    },
  ],
  'garbage.sse': [
    start('chatcmpl-BF3cc4Ms1VpYo6Ze0Nu2Rx5Ad9Tb', 1742420000),
    { type: 'text-start', index: 0 },
    { type: 'text-delta', index: 0, delta: 'Hello' },
    {
      type: 'error',
      error: { code: 'invalid_upstream_stream', message: 'the upstream sent data that is not a JSON object' },
    },
  ],
  'truncated.sse': [
    start('chatcmpl-BG4dd5Nt2WqZp7Af1Ov3Sy6Be0Uc', 1742430000),
    { type: 'text-start', index: 0 },
    { type: 'text-delta', index: 0, delta: 'The first' },
    { type: 'text-delta', index: 0, delta: ' half' },
    { type: 'error', error: { code: 'stream_truncated', message: 'the upstream stream ended before a finish_reason' } },
  ],
};

describe('createChatStreamDecoder: recorded-style fixtures under every split', () => {
  for (const [name, expected] of Object.entries(EXPECTED)) {
    test(name, async () => {
      const bytes = await readFixture(`${FIXTURES}/${name}`);
      for (const [splitName, split] of Object.entries(SPLITS)) {
        const events = await decode(bytes, split);
        expect({ split: splitName, events }).toEqual({ split: splitName, events: expected });
      }
    });
  }

  test('every fixture has an expectation', () => {
    const files = [...new Bun.Glob('*.sse').scanSync(FIXTURES)].sort();
    expect(files).toEqual(Object.keys(EXPECTED).sort());
  });
});

describe('createChatStreamDecoder: edge cases', () => {
  const sse = (...events: Array<object | string>) =>
    new TextEncoder().encode(events.map((e) => `data: ${typeof e === 'string' ? e : JSON.stringify(e)}\n\n`).join(''));
  const chunk = (delta: object, finish: string | null = null, extra: object = {}) => ({
    id: 'c1',
    object: 'chat.completion.chunk',
    created: 9,
    model: 'up',
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...extra,
  });
  const call = (index: number | undefined, fields: object) => ({
    tool_calls: [{ ...(index === undefined ? {} : { index }), ...fields }],
  });
  const toolEvents = (events: StreamEvent[]) => events.filter((e) => e.type.startsWith('tool-call'));

  test('usage inside the finish chunk and a later usage chunk merge; the finish waits for [DONE]', async () => {
    const events = await decode(
      sse(
        chunk({ role: 'assistant', content: 'hi' }),
        chunk({}, 'stop', { usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } }),
        {
          id: 'c1',
          choices: [],
          usage: {
            prompt_tokens: 3,
            completion_tokens: 2,
            total_tokens: 5,
            prompt_tokens_details: { cached_tokens: 1 },
          },
        },
        '[DONE]',
      ),
      WHOLE,
    );
    // Each usage report is passed on as it comes (the running total), the finish at [DONE].
    expect(events.slice(-4)).toEqual([
      { type: 'text-end', index: 0 },
      { type: 'usage', usage: { inputTokens: 3, outputTokens: 1, totalTokens: 4 } },
      { type: 'usage', usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5, cachedInputTokens: 1 } },
      {
        type: 'finish',
        finishReason: { unified: 'stop', raw: 'stop' },
        usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5, cachedInputTokens: 1 },
      },
    ]);
  });

  test('text after a tool call opens a new text block; content after the finish_reason is ignored', async () => {
    const events = await decode(
      sse(
        chunk({ content: 'a' }),
        chunk(call(0, { id: 'x', function: { name: 'f', arguments: '{}' } })),
        chunk({ content: 'b' }),
        chunk({}, 'tool_calls'),
        chunk({ content: 'late' }),
        '[DONE]',
      ),
      WHOLE,
    );
    expect(events.slice(1)).toEqual([
      { type: 'text-start', index: 0 },
      { type: 'text-delta', index: 0, delta: 'a' },
      { type: 'text-end', index: 0 },
      { type: 'tool-call-start', index: 1, id: 'x', name: 'f' },
      { type: 'tool-call-delta', index: 1, delta: '{}' },
      { type: 'text-start', index: 2 },
      { type: 'text-delta', index: 2, delta: 'b' },
      { type: 'tool-call-end', index: 1 },
      { type: 'text-end', index: 2 },
      {
        type: 'finish',
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
      },
    ]);
  });

  test('tool calls without index are told apart by id; a reused index with a new id is a new call', async () => {
    const events = await decode(
      sse(
        chunk(call(undefined, { id: 'a', function: { name: 'f', arguments: '{"x":' } })),
        chunk(call(undefined, { function: { arguments: '1}' } })),
        chunk(call(undefined, { id: 'b', function: { name: 'g', arguments: '{}' } })),
        chunk(call(0, { id: 'c', function: { name: 'h', arguments: '{' } })),
        chunk(call(0, { id: 'd', function: { name: 'k', arguments: '{}' } })),
        chunk(call(0, { function: { arguments: ' ' } })),
        chunk({}, 'tool_calls'),
        '[DONE]',
      ),
      WHOLE,
    );
    expect(toolEvents(events)).toEqual([
      { type: 'tool-call-start', index: 0, id: 'a', name: 'f' },
      { type: 'tool-call-delta', index: 0, delta: '{"x":' },
      { type: 'tool-call-delta', index: 0, delta: '1}' },
      { type: 'tool-call-start', index: 1, id: 'b', name: 'g' },
      { type: 'tool-call-delta', index: 1, delta: '{}' },
      { type: 'tool-call-start', index: 2, id: 'c', name: 'h' },
      { type: 'tool-call-delta', index: 2, delta: '{' },
      { type: 'tool-call-start', index: 3, id: 'd', name: 'k' },
      { type: 'tool-call-delta', index: 3, delta: '{}' },
      { type: 'tool-call-delta', index: 3, delta: ' ' },
      { type: 'tool-call-end', index: 0 },
      { type: 'tool-call-end', index: 1 },
      { type: 'tool-call-end', index: 2 },
      { type: 'tool-call-end', index: 3 },
    ]);
  });

  test('a tool call that never gets a name is an invalid stream, not a finish', async () => {
    const events = await decode(
      sse(chunk(call(0, { id: 'a', function: { arguments: '{}' } })), chunk({}, 'tool_calls'), '[DONE]'),
      WHOLE,
    );
    expect(events).toEqual([
      { type: 'message-start', id: 'c1', model: MODEL, created: 9 },
      {
        type: 'error',
        error: { code: 'invalid_upstream_stream', message: 'tool call a never received a function name' },
      },
    ]);
  });

  test('[DONE] without a finish_reason finishes as other; a missing id and created are filled in', async () => {
    const events = await decode(sse({ choices: [{ delta: { content: 'x' } }] }, '[DONE]'), [4], 77);
    expect(events).toEqual([
      {
        type: 'message-start',
        id: expect.stringMatching(/^chatcmpl-/) as unknown as string,
        model: MODEL,
        created: 77,
      },
      { type: 'text-start', index: 0 },
      { type: 'text-delta', index: 0, delta: 'x' },
      { type: 'text-end', index: 0 },
      {
        type: 'finish',
        finishReason: { unified: 'other' },
        usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
      },
    ]);
  });

  test('error shapes: a string error, vLLM error objects, event: error; nothing after them', async () => {
    expect(await decode(sse({ error: 'overloaded' }, chunk({ content: 'x' })), WHOLE)).toEqual([
      { type: 'error', error: { code: 'upstream_error', message: 'overloaded' } },
    ]);
    expect(
      await decode(
        sse(chunk({ content: 'x' }), { object: 'error', message: 'bad', type: 'BadRequestError', code: 400 }),
        WHOLE,
      ),
    ).toMatchObject([
      { type: 'message-start' },
      { type: 'text-start' },
      { type: 'text-delta' },
      { type: 'error', error: { code: 'upstream_error', message: 'bad' } },
    ]);
    const named = new TextEncoder().encode('event: error\ndata: {"message":"quota"}\n\n');
    expect(await decode(named, WHOLE)).toEqual([
      { type: 'error', error: { code: 'upstream_error', message: 'quota' } },
    ]);
  });

  test('JSON that is not a chunk, an empty stream, and [DONE] alone', async () => {
    expect(await decode(sse({ hello: 'world' }), WHOLE)).toEqual([
      {
        type: 'error',
        error: {
          code: 'invalid_upstream_stream',
          message: 'the upstream sent data that is not a chat.completion.chunk',
        },
      },
    ]);
    expect(await decode(new Uint8Array(), [1])).toEqual([
      {
        type: 'error',
        error: { code: 'stream_truncated', message: 'the upstream stream ended before a finish_reason' },
      },
    ]);
    expect(await decode(sse('[DONE]'), WHOLE)).toEqual([
      {
        type: 'error',
        error: { code: 'invalid_upstream_stream', message: 'the upstream stream ended with [DONE] before any chunk' },
      },
    ]);
  });
});

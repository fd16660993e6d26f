import { describe, expect, test } from 'bun:test';
import { createAnthropicStreamDecoder } from '../../translators/anthropic-messages/index.ts';
import type { StreamEvent } from '../../translators/canonical/stream.ts';
import { parseSseBytes, type EventSourceMessage } from '../../translators/common/sse.ts';
import { toTransformStream } from '../../translators/common/stream-translator.ts';
import { collect, readFixture, replayBytes, SPLITS } from '../helpers/replay-sse.ts';

const FIXTURES = `${import.meta.dir}/../fixtures/anthropic-messages`;
const MODEL = 'anthropic/claude-sonnet';
const CREATED = 1735689600;

async function decode(bytes: Uint8Array, split: number[]): Promise<StreamEvent[]> {
  return collect(
    parseSseBytes(replayBytes(bytes, split)).pipeThrough(
      toTransformStream(createAnthropicStreamDecoder({ model: MODEL, created: CREATED })),
    ),
  );
}

async function decodeMessages(messages: EventSourceMessage[]): Promise<StreamEvent[]> {
  const source = new ReadableStream<EventSourceMessage>({
    start(controller) {
      for (const message of messages) controller.enqueue(message);
      controller.close();
    },
  });
  return collect(
    source.pipeThrough(toTransformStream(createAnthropicStreamDecoder({ model: MODEL, created: CREATED }))),
  );
}

const msg = (event: string, data: unknown): EventSourceMessage => ({
  event,
  data: JSON.stringify(data),
  id: undefined,
});

const start = (id: string, inputTokens: number, cachedInputTokens?: number): StreamEvent => ({
  type: 'message-start',
  id,
  model: MODEL,
  created: CREATED,
  usage: cachedInputTokens === undefined ? { inputTokens } : { inputTokens, cachedInputTokens },
});

const EXPECTED: Record<string, StreamEvent[]> = {
  'text.sse': [
    start('msg_01TextFixture', 1821, 1800),
    { type: 'text-start', index: 0 },
    { type: 'text-delta', index: 0, delta: 'Héllo' },
    { type: 'text-delta', index: 0, delta: ', wörld 🌍!' },
    { type: 'text-delta', index: 0, delta: ' Ça va?' },
    { type: 'text-end', index: 0 },
    { type: 'usage', usage: { inputTokens: 1821, outputTokens: 12, totalTokens: 1833, cachedInputTokens: 1800 } },
    {
      type: 'finish',
      finishReason: { unified: 'stop', raw: 'end_turn' },
      usage: { inputTokens: 1821, outputTokens: 12, totalTokens: 1833, cachedInputTokens: 1800 },
    },
  ],
  'tool-use.sse': [
    start('msg_01ToolFixture', 472),
    { type: 'text-start', index: 0 },
    { type: 'text-delta', index: 0, delta: 'Let me check the weather.' },
    { type: 'text-end', index: 0 },
    { type: 'tool-call-start', index: 1, id: 'toolu_01WeatherA', name: 'get_weather' },
    { type: 'tool-call-delta', index: 1, delta: '{"city": "Par' },
    { type: 'tool-call-delta', index: 1, delta: 'is", "unit": "c"}' },
    { type: 'tool-call-end', index: 1 },
    { type: 'usage', usage: { inputTokens: 472, outputTokens: 89, totalTokens: 561 } },
    {
      type: 'finish',
      finishReason: { unified: 'tool-calls', raw: 'tool_use' },
      usage: { inputTokens: 472, outputTokens: 89, totalTokens: 561 },
    },
  ],
  // The thinking block (upstream index 0) is skipped; canonical indices still start at 0.
  'parallel-tool-calls.sse': [
    start('msg_01ParallelFixture', 610),
    { type: 'reasoning-start', index: 0 },
    { type: 'reasoning-delta', index: 0, delta: 'Two cities, two calls.' },
    { type: 'reasoning-end', index: 0, signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3h' },
    { type: 'text-start', index: 1 },
    { type: 'text-delta', index: 1, delta: 'Checking both.' },
    { type: 'text-end', index: 1 },
    { type: 'tool-call-start', index: 2, id: 'toolu_01Paris', name: 'get_weather' },
    { type: 'tool-call-delta', index: 2, delta: '{"city":' },
    { type: 'tool-call-delta', index: 2, delta: ' "Paris"}' },
    { type: 'tool-call-end', index: 2 },
    { type: 'tool-call-start', index: 3, id: 'toolu_01Tokyo', name: 'get_weather' },
    { type: 'tool-call-delta', index: 3, delta: '{"city": "Tokyo"}' },
    { type: 'tool-call-end', index: 3 },
    { type: 'usage', usage: { inputTokens: 610, outputTokens: 140, totalTokens: 750, reasoningTokens: 31 } },
    {
      type: 'finish',
      finishReason: { unified: 'tool-calls', raw: 'tool_use' },
      usage: { inputTokens: 610, outputTokens: 140, totalTokens: 750, reasoningTokens: 31 },
    },
  ],
  'stop-sequence.sse': [
    start('msg_01StopSeqFixture', 15),
    { type: 'text-start', index: 0 },
    { type: 'text-delta', index: 0, delta: '1, 2, 3' },
    { type: 'text-end', index: 0 },
    { type: 'usage', usage: { inputTokens: 15, outputTokens: 7, totalTokens: 22 } },
    {
      type: 'finish',
      finishReason: { unified: 'stop-sequence', raw: 'stop_sequence' },
      stopSequence: '###',
      usage: { inputTokens: 15, outputTokens: 7, totalTokens: 22 },
    },
  ],
  // message_start says 0 input tokens; the later message_delta figure (33) wins.
  'max-tokens.sse': [
    start('msg_01LengthFixture', 0),
    { type: 'text-start', index: 0 },
    { type: 'text-delta', index: 0, delta: 'Once upon a' },
    { type: 'text-delta', index: 0, delta: ' time' },
    { type: 'text-end', index: 0 },
    { type: 'usage', usage: { inputTokens: 33, outputTokens: 5, totalTokens: 38 } },
    {
      type: 'finish',
      finishReason: { unified: 'length', raw: 'max_tokens' },
      usage: { inputTokens: 33, outputTokens: 5, totalTokens: 38 },
    },
  ],
  'error-midstream.sse': [
    start('msg_01ErrorFixture', 12),
    { type: 'text-start', index: 0 },
    { type: 'text-delta', index: 0, delta: 'Partial ans' },
    { type: 'error', error: { code: 'upstream_overloaded', message: 'Overloaded' } },
  ],
  'truncated.sse': [
    start('msg_01TruncFixture', 12),
    { type: 'text-start', index: 0 },
    { type: 'text-delta', index: 0, delta: 'This stream breaks' },
    { type: 'text-delta', index: 0, delta: ' off here' },
    { type: 'error', error: { code: 'stream_truncated', message: 'the upstream stream ended without message_stop' } },
  ],
  'garbage.sse': [
    start('msg_01GarbageFixture', 12),
    { type: 'text-start', index: 0 },
    { type: 'text-delta', index: 0, delta: 'ok so far' },
    {
      type: 'error',
      error: { code: 'invalid_upstream_stream', message: 'the upstream sent data that is not a JSON object' },
    },
  ],
};

describe('Anthropic stream decoder: recorded fixtures under every split', () => {
  for (const [file, expected] of Object.entries(EXPECTED)) {
    for (const [splitName, split] of Object.entries(SPLITS)) {
      test(`${file} (${splitName})`, async () => {
        const bytes = await readFixture(`${FIXTURES}/${file}`);
        expect(await decode(bytes, split)).toEqual(expected);
      });
    }
  }
});

describe('Anthropic stream decoder: edge cases', () => {
  const messageStart = msg('message_start', {
    type: 'message_start',
    message: {
      id: 'msg_x',
      type: 'message',
      role: 'assistant',
      content: [],
      usage: { input_tokens: 5, output_tokens: 1 },
    },
  });
  const stop = msg('message_stop', { type: 'message_stop' });

  test('content before message_start is an invalid stream', async () => {
    const events = await decodeMessages([
      msg('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
    ]);
    expect(events).toEqual([
      {
        type: 'error',
        error: {
          code: 'invalid_upstream_stream',
          message: 'the upstream stream began with content_block_start instead of message_start',
        },
      },
    ]);
  });

  test('an error event before anything else is the only event', async () => {
    const events = await decodeMessages([
      msg('error', { type: 'error', error: { type: 'api_error', message: 'Internal server error' } }),
    ]);
    expect(events).toEqual([{ type: 'error', error: { code: 'upstream_error', message: 'Internal server error' } }]);
  });

  test('a tool_use block without a name is an invalid stream', async () => {
    const events = await decodeMessages([
      messageStart,
      msg('content_block_start', {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'tool_use', id: 'toolu_1', name: '', input: {} },
      }),
    ]);
    expect(events.at(-1)).toEqual({
      type: 'error',
      error: { code: 'invalid_upstream_stream', message: 'tool_use block 0 without an id or name' },
    });
    expect(events).toHaveLength(2);
  });

  test('a delta for a block never started is an invalid stream', async () => {
    const events = await decodeMessages([
      messageStart,
      msg('content_block_delta', { type: 'content_block_delta', index: 4, delta: { type: 'text_delta', text: 'x' } }),
    ]);
    expect(events[1]).toEqual({
      type: 'error',
      error: {
        code: 'invalid_upstream_stream',
        message: 'content_block_delta for content block 4, which was never started',
      },
    });
  });

  test('server tool blocks are skipped but counted for the bill (redacted thinking kept) and unknown event types ignored; events after message_stop are ignored', async () => {
    const events = await decodeMessages([
      messageStart,
      msg('content_block_start', {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} },
      }),
      msg('content_block_delta', {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'input_json_delta', partial_json: '{"query":"x"}' },
      }),
      msg('content_block_stop', { type: 'content_block_stop', index: 0 }),
      msg('content_block_start', {
        type: 'content_block_start',
        index: 1,
        content_block: { type: 'redacted_thinking', data: 'abc' },
      }),
      msg('content_block_stop', { type: 'content_block_stop', index: 1 }),
      msg('brand_new_event', { type: 'brand_new_event' }),
      msg('content_block_start', {
        type: 'content_block_start',
        index: 2,
        content_block: { type: 'text', text: 'Found' },
      }),
      msg('content_block_stop', { type: 'content_block_stop', index: 2 }),
      msg('message_delta', {
        type: 'message_delta',
        delta: { stop_reason: 'end_turn', stop_sequence: null },
        usage: { output_tokens: 4 },
      }),
      stop,
      msg('ping', { type: 'ping' }),
    ]);
    expect(events).toEqual([
      { type: 'message-start', id: 'msg_x', model: MODEL, created: CREATED, usage: { inputTokens: 5 } },
      // Not shown, but counted for the bill as it starts.
      { type: 'usage', usage: { builtInToolCalls: { web_search: 1 } } },
      { type: 'reasoning-start', index: 0, redacted: 'abc' },
      { type: 'reasoning-end', index: 0 },
      { type: 'text-start', index: 1 },
      { type: 'text-delta', index: 1, delta: 'Found' },
      { type: 'text-end', index: 1 },
      // message_delta's usage, passed on as it comes.
      {
        type: 'usage',
        usage: { inputTokens: 5, outputTokens: 4, totalTokens: 9, builtInToolCalls: { web_search: 1 } },
      },
      {
        type: 'finish',
        finishReason: { unified: 'stop', raw: 'end_turn' },
        usage: { inputTokens: 5, outputTokens: 4, totalTokens: 9, builtInToolCalls: { web_search: 1 } },
      },
    ]);
  });

  test('server tool calls are billed from usage.server_tool_use or the blocks seen, whichever counts more', async () => {
    const search = (index: number) =>
      msg('content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'server_tool_use', id: `srvtoolu_${index}`, name: 'web_search', input: {} },
      });
    const finishOf = async (serverToolUse: object) => {
      const events = await decodeMessages([
        msg('message_start', {
          type: 'message_start',
          message: { id: 'msg_y', type: 'message', role: 'assistant', content: [], usage: { input_tokens: 5 } },
        }),
        search(0),
        msg('content_block_stop', { type: 'content_block_stop', index: 0 }),
        search(1),
        msg('content_block_stop', { type: 'content_block_stop', index: 1 }),
        msg('message_delta', {
          type: 'message_delta',
          delta: { stop_reason: 'end_turn', stop_sequence: null },
          usage: { output_tokens: 4, server_tool_use: serverToolUse },
        }),
        stop,
      ]);
      const finish = events.at(-1);
      return finish?.type === 'finish' ? finish.usage.builtInToolCalls : undefined;
    };
    expect(await finishOf({ web_search_requests: 3, web_fetch_requests: 1 })).toEqual({ web_search: 3, web_fetch: 1 });
    expect(await finishOf({ web_search_requests: 1 })).toEqual({ web_search: 2 });
    expect(await finishOf({ 'Bad key_requests': 9, web_search_requests: '7' })).toEqual({ web_search: 2 });
  });

  test('a tool_use block carrying its whole input up front is honoured', async () => {
    const events = await decodeMessages([
      messageStart,
      msg('content_block_start', {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'tool_use', id: 'toolu_9', name: 'f', input: { a: 1 } },
      }),
      msg('content_block_stop', { type: 'content_block_stop', index: 0 }),
      msg('message_delta', {
        type: 'message_delta',
        delta: { stop_reason: 'tool_use', stop_sequence: null },
        usage: { output_tokens: 9 },
      }),
      stop,
    ]);
    expect(events.slice(1, 4)).toEqual([
      { type: 'tool-call-start', index: 0, id: 'toolu_9', name: 'f' },
      { type: 'tool-call-delta', index: 0, delta: '{"a":1}' },
      { type: 'tool-call-end', index: 0 },
    ]);
  });

  test('blocks left open at message_stop are ended before the finish; no message_delta means finish reason other', async () => {
    const events = await decodeMessages([
      messageStart,
      msg('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
      msg('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'hi' } }),
      stop,
    ]);
    expect(events.slice(2)).toEqual([
      { type: 'text-delta', index: 0, delta: 'hi' },
      { type: 'text-end', index: 0 },
      {
        type: 'finish',
        finishReason: { unified: 'other' },
        usage: { inputTokens: 5, outputTokens: 1, totalTokens: 6 },
      },
    ]);
  });

  test('an empty upstream stream is truncated', async () => {
    expect(await decodeMessages([])).toEqual([
      { type: 'error', error: { code: 'stream_truncated', message: 'the upstream stream ended without message_stop' } },
    ]);
  });

  test('message-start without a created option still carries a Unix-seconds timestamp', async () => {
    const source = new ReadableStream<EventSourceMessage>({
      start(controller) {
        controller.enqueue(messageStart);
        controller.close();
      },
    });
    const [first] = await collect(
      source.pipeThrough(toTransformStream(createAnthropicStreamDecoder({ model: MODEL }))),
    );
    expect(first?.type).toBe('message-start');
    if (first?.type === 'message-start') expect(Math.abs(first.created - Date.now() / 1000)).toBeLessThan(5);
  });
});

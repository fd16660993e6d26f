import { describe, expect, test } from 'bun:test';
import type { StreamEvent } from '../../translators/canonical/stream.ts';
import { createResponsesStreamDecoder } from '../../translators/responses/index.ts';
import { parseSseBytes } from '../../translators/common/sse.ts';
import { toTransformStream } from '../../translators/common/stream-translator.ts';
import { collect, readFixture, replayBytes, SPLITS } from '../helpers/replay-sse.ts';

const FIXTURES = `${import.meta.dir}/../fixtures/responses`;
const MODEL = 'acme/chat-large';

async function decode(bytes: Uint8Array, split: number[]): Promise<StreamEvent[]> {
  return collect(
    parseSseBytes(replayBytes(bytes, split)).pipeThrough(
      toTransformStream(createResponsesStreamDecoder({ model: MODEL })),
    ),
  );
}

const start = (id: string): StreamEvent => ({ type: 'message-start', id, model: MODEL, created: 1741290958 });
const usage = (input: number, output: number, cached = 0, reasoning = 0) => ({
  inputTokens: input,
  outputTokens: output,
  totalTokens: input + output,
  cachedInputTokens: cached,
  reasoningTokens: reasoning,
});

const EXPECTED: Record<string, StreamEvent[]> = {
  'text.sse': [
    start('resp_67c9fdcecf488190bdd9a0a5a4b1e2f3'),
    { type: 'text-start', index: 0 },
    { type: 'text-delta', index: 0, delta: 'Hi' },
    { type: 'text-delta', index: 0, delta: ' there' },
    { type: 'text-delta', index: 0, delta: '! Café ☕ is' },
    { type: 'text-delta', index: 0, delta: ' open' },
    { type: 'text-delta', index: 0, delta: ' until 9.' },
    { type: 'text-end', index: 0 },
    { type: 'finish', finishReason: { unified: 'stop', raw: 'completed' }, usage: usage(37, 11) },
  ],
  'parallel-tool-calls.sse': [
    start('resp_682c1b3a2f0c8191a9a4f3c0b9d8e7f6'),
    { type: 'text-start', index: 0 },
    { type: 'text-delta', index: 0, delta: 'Checking' },
    { type: 'text-delta', index: 0, delta: ' both cities.' },
    { type: 'text-end', index: 0 },
    { type: 'tool-call-start', index: 1, id: 'call_Paris01', name: 'get_weather' },
    { type: 'tool-call-delta', index: 1, delta: '{"location":' },
    { type: 'tool-call-start', index: 2, id: 'call_Tokyo02', name: 'get_weather' },
    { type: 'tool-call-delta', index: 2, delta: '{"location":"Tokyo, Japan"}' },
    { type: 'tool-call-delta', index: 1, delta: '"Paris, France"}' },
    { type: 'tool-call-end', index: 1 },
    { type: 'tool-call-end', index: 2 },
    { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'completed' }, usage: usage(82, 46, 64) },
  ],
  'length.sse': [
    start('resp_6830a1f2b3c48190a5e6d7c8b9a0f1e2'),
    { type: 'text-start', index: 0 },
    { type: 'text-delta', index: 0, delta: 'Once upon' },
    { type: 'text-delta', index: 0, delta: ' a time' },
    { type: 'text-end', index: 0 },
    { type: 'finish', finishReason: { unified: 'length', raw: 'incomplete:max_output_tokens' }, usage: usage(12, 16) },
  ],
  'reasoning-text.sse': [
    start('resp_6831b2c3d4e58190f6a7b8c9d0e1f2a3'),
    { type: 'text-start', index: 0 },
    { type: 'text-delta', index: 0, delta: '42' },
    { type: 'text-delta', index: 0, delta: '.' },
    { type: 'text-end', index: 0 },
    { type: 'finish', finishReason: { unified: 'stop', raw: 'completed' }, usage: usage(20, 140, 0, 128) },
  ],
  'tool-call.sse': [
    start('resp_6837b8c9d0e18190f2a3b4c5d6e7f8a9'),
    { type: 'tool-call-start', index: 0, id: 'call_Q1', name: 'search_docs' },
    { type: 'tool-call-delta', index: 0, delta: '{"query":"naï' },
    { type: 'tool-call-delta', index: 0, delta: 've \\"quotes\\" — done"}' },
    { type: 'tool-call-end', index: 0 },
    { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'completed' }, usage: usage(55, 19) },
  ],
  'error-midstream.sse': [
    start('resp_6832c3d4e5f68190a7b8c9d0e1f2a3b4'),
    { type: 'text-start', index: 0 },
    { type: 'text-delta', index: 0, delta: 'Partial' },
    { type: 'text-delta', index: 0, delta: ' answer' },
    {
      type: 'error',
      error: { code: 'server_error', message: 'The server had an error while processing your request.' },
    },
  ],
  'error-flat.sse': [
    start('resp_6833d4e5f6a78190b8c9d0e1f2a3b4c5'),
    {
      type: 'error',
      error: { code: 'rate_limit_exceeded', message: 'Rate limit reached for gpt-4.1 on tokens per min (TPM).' },
    },
  ],
  'truncated.sse': [
    start('resp_6834e5f6a7b88190c9d0e1f2a3b4c5d6'),
    { type: 'text-start', index: 0 },
    { type: 'text-delta', index: 0, delta: 'The first' },
    { type: 'text-delta', index: 0, delta: ' half' },
    {
      type: 'error',
      error: { code: 'stream_truncated', message: 'the upstream stream ended before response.completed' },
    },
  ],
  // OpenAI's reasoning summary: one reasoning block for the item, its two parts a blank line apart.
  'reasoning-summary.sse': [
    start('resp_6840a1b2c3d48190e5f6a7b8c9d0e1f2'),
    { type: 'reasoning-start', index: 0 },
    { type: 'reasoning-delta', index: 0, delta: '**Adding numbers**\n\n' },
    { type: 'reasoning-delta', index: 0, delta: 'The user asks for 19+23.' },
    { type: 'reasoning-delta', index: 0, delta: '\n\n' },
    { type: 'reasoning-delta', index: 0, delta: 'Nineteen plus twenty-three ' },
    { type: 'reasoning-delta', index: 0, delta: 'is 42.' },
    { type: 'reasoning-end', index: 0 },
    { type: 'text-start', index: 1 },
    { type: 'text-delta', index: 1, delta: '42' },
    { type: 'text-end', index: 1 },
    { type: 'finish', finishReason: { unified: 'stop', raw: 'completed' }, usage: usage(14, 90, 0, 64) },
  ],
  'failed.sse': [
    start('resp_6835f6a7b8c98190d0e1f2a3b4c5d6e7'),
    // A failed response is an error for every client, its usage still charged.
    { type: 'usage', usage: usage(9, 0) },
    {
      type: 'error',
      error: { code: 'server_error', message: 'the upstream response failed: The model produced invalid content.' },
    },
  ],
  'garbage.sse': [
    start('resp_6836a7b8c9d08190e1f2a3b4c5d6e7f8'),
    {
      type: 'error',
      error: { code: 'invalid_upstream_stream', message: 'the upstream sent data that is not a Responses event' },
    },
  ],
};

describe('createResponsesStreamDecoder: recorded-style fixtures under every split', () => {
  for (const [name, expected] of Object.entries(EXPECTED)) {
    test(name, async () => {
      const bytes = await readFixture(`${FIXTURES}/${name}`);
      for (const [splitName, split] of Object.entries(SPLITS)) {
        const events = await decode(bytes, split);
        expect({ split: splitName, events }).toEqual({ split: splitName, events: expected });
      }
    });
  }

  test('every fixture has an expectation', async () => {
    const files = [...new Bun.Glob('*.sse').scanSync(FIXTURES)].sort();
    expect(files).toEqual(Object.keys(EXPECTED).sort());
  });
});

describe('createResponsesStreamDecoder: edge cases', () => {
  const sse = (...events: object[]) =>
    new TextEncoder().encode(events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join(''));
  const created = {
    type: 'response.created',
    response: { id: 'resp_1', created_at: 5, status: 'in_progress', output: [] },
  };
  const completed = (output: unknown[] = []) => ({
    type: 'response.completed',
    response: {
      id: 'resp_1',
      status: 'completed',
      output,
      usage: { input_tokens: 1, output_tokens: 2, total_tokens: 3 },
    },
  });

  test('text that arrives only in the done item, and arguments only in arguments.done', async () => {
    const events = await decode(
      sse(
        created,
        {
          type: 'response.output_item.added',
          output_index: 0,
          item: { type: 'message', id: 'm', role: 'assistant', status: 'in_progress', content: [] },
        },
        {
          type: 'response.output_item.done',
          output_index: 0,
          item: {
            type: 'message',
            id: 'm',
            role: 'assistant',
            status: 'completed',
            content: [{ type: 'output_text', text: 'whole', annotations: [] }],
          },
        },
        {
          type: 'response.output_item.added',
          output_index: 1,
          item: { type: 'function_call', id: 'fc', call_id: 'c1', name: 'f', arguments: '' },
        },
        { type: 'response.function_call_arguments.done', output_index: 1, item_id: 'fc', arguments: '{"a":1}' },
        completed(),
      ),
      [Number.MAX_SAFE_INTEGER],
    );
    expect(events).toEqual([
      { type: 'message-start', id: 'resp_1', model: MODEL, created: 5 },
      { type: 'text-start', index: 0 },
      { type: 'text-delta', index: 0, delta: 'whole' },
      { type: 'text-end', index: 0 },
      { type: 'tool-call-start', index: 1, id: 'c1', name: 'f' },
      { type: 'tool-call-delta', index: 1, delta: '{"a":1}' },
      { type: 'tool-call-end', index: 1 },
      {
        type: 'finish',
        finishReason: { unified: 'tool-calls', raw: 'completed' },
        usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 },
      },
    ]);
  });

  test('blocks left open by the upstream are closed before the finish', async () => {
    const events = await decode(
      sse(
        created,
        { type: 'response.output_text.delta', output_index: 0, content_index: 0, item_id: 'm', delta: 'hi' },
        completed(),
      ),
      [Number.MAX_SAFE_INTEGER],
    );
    expect(events.map((e) => e.type)).toEqual(['message-start', 'text-start', 'text-delta', 'text-end', 'finish']);
  });

  test('a function call without a name is an invalid stream', async () => {
    const events = await decode(
      sse(
        created,
        {
          type: 'response.output_item.added',
          output_index: 0,
          item: { type: 'function_call', id: 'fc', call_id: 'c', name: '' },
        },
        completed(),
      ),
      [7],
    );
    expect(events.at(-1)).toEqual({
      type: 'error',
      error: { code: 'invalid_upstream_stream', message: 'a function_call item without call_id or name' },
    });
    expect(events.filter((e) => e.type === 'finish')).toEqual([]);
  });

  test('a stream that does not begin with response.created', async () => {
    const events = await decode(
      sse({ type: 'response.output_text.delta', output_index: 0, content_index: 0, delta: 'x' }),
      [3],
    );
    expect(events).toEqual([
      {
        type: 'error',
        error: {
          code: 'invalid_upstream_stream',
          message: 'the upstream stream began with response.output_text.delta instead of response.created',
        },
      },
    ]);
  });

  test("a failed response is a Responses client's answer (passed through): a finish, stored and settled as the upstream's", async () => {
    const bytes = await readFixture(`${FIXTURES}/failed.sse`);
    const events = await collect(
      parseSseBytes(replayBytes(bytes, [])).pipeThrough(
        toTransformStream(createResponsesStreamDecoder({ model: MODEL, failedIsAnswer: true })),
      ),
    );
    expect(events).toEqual([
      start('resp_6835f6a7b8c98190d0e1f2a3b4c5d6e7'),
      { type: 'finish', finishReason: { unified: 'error', raw: 'failed' }, usage: usage(9, 0) },
    ]);
  });

  test('an empty stream is truncated', async () => {
    expect(await decode(new Uint8Array(), [1])).toEqual([
      {
        type: 'error',
        error: { code: 'stream_truncated', message: 'the upstream stream ended before response.completed' },
      },
    ]);
  });
});

import { describe, expect, test } from 'bun:test';
import OpenAI from 'openai';
import type { StreamEvent } from '../../translators/canonical/stream.ts';
import {
  createResponsesStreamDecoder,
  createResponsesStreamEncoder,
  encodeResponsesResponse,
  type ResponsesStreamEncoderOptions,
} from '../../translators/responses/index.ts';
import { parseSseBytes } from '../../translators/common/sse.ts';
import { toTransformStream } from '../../translators/common/stream-translator.ts';
import { collect, replayBytes, SPLITS } from '../helpers/replay-sse.ts';

const OPTS: ResponsesStreamEncoderOptions = { responseId: 'resp_abc', model: 'acme/chat-large', createdAt: 1700000000 };

async function encode(events: StreamEvent[], opts: ResponsesStreamEncoderOptions = OPTS): Promise<string> {
  const input = new ReadableStream<StreamEvent>({
    start(controller) {
      for (const event of events) controller.enqueue(event);
      controller.close();
    },
  });
  return (await collect(input.pipeThrough(toTransformStream(createResponsesStreamEncoder(opts))))).join('');
}

/** The SSE text as [event name, data] pairs. */
function frames(text: string): Array<{ event: string; data: Record<string, unknown> }> {
  return text
    .split('\n\n')
    .filter(Boolean)
    .map((frame) => {
      const [eventLine, dataLine, ...rest] = frame.split('\n');
      expect(rest).toEqual([]);
      expect(eventLine).toStartWith('event: ');
      expect(dataLine).toStartWith('data: ');
      return { event: eventLine!.slice(7), data: JSON.parse(dataLine!.slice(6)) as Record<string, unknown> };
    });
}

const start: StreamEvent = {
  type: 'message-start',
  id: 'chatcmpl-upstream',
  model: 'upstream-model',
  created: 1700000001,
};
const usage = { inputTokens: 5, outputTokens: 3, totalTokens: 8 };
const TEXT: StreamEvent[] = [
  start,
  { type: 'text-start', index: 0 },
  { type: 'text-delta', index: 0, delta: 'Hello' },
  { type: 'text-delta', index: 0, delta: ' world' },
  { type: 'text-end', index: 0 },
  { type: 'finish', finishReason: { unified: 'stop' }, usage },
];
const TOOLS: StreamEvent[] = [
  start,
  { type: 'text-start', index: 0 },
  { type: 'text-delta', index: 0, delta: 'Checking.' },
  { type: 'text-end', index: 0 },
  { type: 'tool-call-start', index: 1, id: 'call_a', name: 'get_weather' },
  { type: 'tool-call-start', index: 2, id: 'call_b', name: 'get_time' },
  { type: 'tool-call-delta', index: 1, delta: '{"city":' },
  { type: 'tool-call-delta', index: 2, delta: '{"tz":"UTC"}' },
  { type: 'tool-call-delta', index: 1, delta: '"Paris"}' },
  { type: 'tool-call-end', index: 2 },
  { type: 'tool-call-end', index: 1 },
  { type: 'usage', usage: { inputTokens: 20 } },
  {
    type: 'finish',
    finishReason: { unified: 'tool-calls' },
    usage: { inputTokens: 20, outputTokens: 9, totalTokens: 29 },
  },
];

/** An openai SDK client whose every request is answered with `body` as an event stream. */
function sdkOver(body: string): OpenAI {
  return new OpenAI({
    apiKey: 'k',
    baseURL: 'http://gateway.test/v1',
    maxRetries: 0,
    fetch: async () => new Response(body, { headers: { 'content-type': 'text/event-stream' } }),
  });
}

describe('createResponsesStreamEncoder', () => {
  test('the exact SSE text of a text response', async () => {
    const text = await encode(TEXT, { ...OPTS, instructions: 'be brief', now: () => 1700000009 });
    const snapshot = (status: string, extra: Record<string, unknown>) => ({
      id: 'resp_abc',
      object: 'response',
      created_at: 1700000000,
      status,
      background: false,
      error: null,
      incomplete_details: null,
      instructions: 'be brief',
      max_output_tokens: null,
      model: 'acme/chat-large',
      output: [],
      parallel_tool_calls: true,
      previous_response_id: null,
      reasoning: { effort: null, summary: null },
      service_tier: 'default',
      store: true,
      temperature: 1,
      text: { format: { type: 'text' } },
      tool_choice: 'auto',
      tools: [],
      top_p: 1,
      truncation: 'disabled',
      usage: null,
      metadata: {},
      ...extra,
    });
    const inProgress = snapshot('in_progress', {});
    const part = (t: string) => ({ type: 'output_text', text: t, annotations: [], logprobs: [] });
    const item = {
      type: 'message',
      id: 'msg_abc_0',
      status: 'completed',
      role: 'assistant',
      content: [part('Hello world')],
    };
    const at = { item_id: 'msg_abc_0', output_index: 0 };
    const expected = [
      ['response.created', { response: inProgress }],
      ['response.in_progress', { response: inProgress }],
      [
        'response.output_item.added',
        {
          output_index: 0,
          item: { type: 'message', id: 'msg_abc_0', status: 'in_progress', role: 'assistant', content: [] },
        },
      ],
      ['response.content_part.added', { ...at, content_index: 0, part: part('') }],
      ['response.output_text.delta', { ...at, content_index: 0, delta: 'Hello', logprobs: [] }],
      ['response.output_text.delta', { ...at, content_index: 0, delta: ' world', logprobs: [] }],
      ['response.output_text.done', { ...at, content_index: 0, text: 'Hello world', logprobs: [] }],
      ['response.content_part.done', { ...at, content_index: 0, part: part('Hello world') }],
      ['response.output_item.done', { output_index: 0, item }],
      [
        'response.completed',
        {
          response: {
            ...snapshot('completed', { completed_at: 1700000009, output: [item] }),
            usage: {
              input_tokens: 5,
              input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
              output_tokens: 3,
              output_tokens_details: { reasoning_tokens: 0 },
              total_tokens: 8,
            },
          },
        },
      ],
    ] as const;
    const expectedText = expected
      .map(
        ([type, payload], i) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: i, ...payload })}\n\n`,
      )
      .join('');
    expect(text).toBe(expectedText);
  });

  test('parallel tool calls: output_index in order of opening, arguments done with name', async () => {
    const got = frames(await encode(TOOLS));
    expect(got.map((f) => f.data.sequence_number)).toEqual(got.map((_, i) => i));
    expect(got.map((f) => [f.event, f.data.output_index ?? null])).toEqual([
      ['response.created', null],
      ['response.in_progress', null],
      ['response.output_item.added', 0],
      ['response.content_part.added', 0],
      ['response.output_text.delta', 0],
      ['response.output_text.done', 0],
      ['response.content_part.done', 0],
      ['response.output_item.done', 0],
      ['response.output_item.added', 1],
      ['response.output_item.added', 2],
      ['response.function_call_arguments.delta', 1],
      ['response.function_call_arguments.delta', 2],
      ['response.function_call_arguments.delta', 1],
      ['response.function_call_arguments.done', 2],
      ['response.output_item.done', 2],
      ['response.function_call_arguments.done', 1],
      ['response.output_item.done', 1],
      ['response.completed', null],
    ]);
    expect(got[8]!.data.item).toEqual({
      type: 'function_call',
      id: 'fc_abc_1',
      call_id: 'call_a',
      name: 'get_weather',
      arguments: '',
      status: 'in_progress',
    });
    expect(got[15]!.data).toMatchObject({ item_id: 'fc_abc_1', name: 'get_weather', arguments: '{"city":"Paris"}' });
    const final = got[17]!.data.response as {
      status: string;
      output: unknown[];
      usage: { input_tokens: number; total_tokens: number };
    };
    expect(final.status).toBe('completed');
    expect(final.usage).toMatchObject({ input_tokens: 20, total_tokens: 29 });
    expect(final.output).toEqual([
      {
        type: 'message',
        id: 'msg_abc_0',
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'Checking.', annotations: [], logprobs: [] }],
      },
      {
        type: 'function_call',
        id: 'fc_abc_1',
        call_id: 'call_a',
        name: 'get_weather',
        arguments: '{"city":"Paris"}',
        status: 'completed',
      },
      {
        type: 'function_call',
        id: 'fc_abc_2',
        call_id: 'call_b',
        name: 'get_time',
        arguments: '{"tz":"UTC"}',
        status: 'completed',
      },
    ]);
  });

  test('the final output equals the non-stream encoding of the same response (item ids match for storage)', async () => {
    const got = frames(await encode(TOOLS));
    const streamed = (got.at(-1)!.data.response as { output: unknown }).output;
    const res = encodeResponsesResponse({
      id: 'resp_abc',
      model: 'acme/chat-large',
      created: 1700000000,
      content: [
        { type: 'text', text: 'Checking.' },
        { type: 'tool-call', id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'tool-call', id: 'call_b', name: 'get_time', arguments: '{"tz":"UTC"}' },
      ],
      finishReason: { unified: 'tool-calls' },
      usage: { inputTokens: 20, outputTokens: 9, totalTokens: 29 },
    });
    expect(streamed).toEqual(res.output);
  });

  test('length ends with response.incomplete and its reason', async () => {
    const got = frames(
      await encode([...TEXT.slice(0, -1), { type: 'finish', finishReason: { unified: 'length' }, usage }]),
    );
    expect(got.at(-1)!.event).toBe('response.incomplete');
    expect(got.at(-1)!.data.response).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
    });
    expect(got.filter((f) => f.event === 'response.completed')).toEqual([]);
    // The item the cap cut is incomplete too, as OpenAI reports it, in its own done event and the
    // final output; an item that ended before it stays completed.
    const done = got.filter((f) => f.event === 'response.output_item.done');
    expect(done.map((f) => (f.data.item as { status: string }).status)).toEqual(['incomplete']);
    const final = (got.at(-1)!.data.response as { output: Array<{ status: string }> }).output;
    expect(final.map((item) => item.status)).toEqual(['incomplete']);

    const two = frames(
      await encode([
        ...TOOLS.slice(0, 4),
        { type: 'text-start', index: 1 },
        { type: 'text-delta', index: 1, delta: 'And then' },
        { type: 'text-end', index: 1 },
        { type: 'usage', usage: { outputTokens: 16 } },
        { type: 'finish', finishReason: { unified: 'length' }, usage },
      ]),
    );
    const statuses = (f: { data: Record<string, unknown> }) => (f.data.item as { status: string }).status;
    expect(two.filter((f) => f.event === 'response.output_item.done').map(statuses)).toEqual([
      'completed',
      'incomplete',
    ]);
    // A response that ends normally: every item completed, as before.
    const stopped = frames(await encode(TEXT));
    expect(stopped.filter((f) => f.event === 'response.output_item.done').map(statuses)).toEqual(['completed']);
  });

  test('an error becomes an error event (flat and nested fields) then response.failed, and nothing after', async () => {
    const got = frames(
      await encode([
        start,
        { type: 'text-start', index: 0 },
        { type: 'text-delta', index: 0, delta: 'Part' },
        { type: 'error', error: { code: 'upstream_error', message: 'upstream went away' } },
        { type: 'text-end', index: 0 },
      ]),
    );
    expect(got.map((f) => f.event)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'error',
      'response.failed',
    ]);
    expect(got[5]!.data).toEqual({
      type: 'error',
      sequence_number: 5,
      code: 'upstream_error',
      message: 'upstream went away',
      param: null,
      error: { type: 'server_error', code: 'upstream_error', message: 'upstream went away', param: null },
    });
    expect(got[6]!.data.response).toMatchObject({
      status: 'failed',
      error: { code: 'server_error', message: 'upstream went away' },
      output: [
        { type: 'message', id: 'msg_abc_0', status: 'incomplete', content: [{ type: 'output_text', text: 'Part' }] },
      ],
    });
  });

  test('an input that ends without finish still ends in failure', async () => {
    const got = frames(await encode(TEXT.slice(0, 3)));
    expect(got.slice(-2).map((f) => [f.event, f.data.code ?? null])).toEqual([
      ['error', 'stream_truncated'],
      ['response.failed', null],
    ]);
  });

  test('echo settings show on every snapshot', async () => {
    const got = frames(
      await encode(TEXT, {
        ...OPTS,
        previousResponseId: 'resp_prev',
        store: false,
        tools: [{ type: 'function', name: 'f', description: null, parameters: { type: 'object' }, strict: true }],
        toolChoice: 'required',
        metadata: { a: 'b' },
        maxOutputTokens: 100,
      }),
    );
    for (const f of [got[0]!, got.at(-1)!]) {
      expect(f.data.response).toMatchObject({
        previous_response_id: 'resp_prev',
        store: false,
        tool_choice: 'required',
        metadata: { a: 'b' },
        max_output_tokens: 100,
      });
    }
  });

  test('round trip: encoder output decodes back to the same canonical events, under every split', async () => {
    for (const events of [TEXT, TOOLS]) {
      const bytes = new TextEncoder().encode(await encode(events));
      const expected = events
        .filter((e) => e.type !== 'usage')
        .map((e) => {
          if (e.type === 'message-start')
            return { type: 'message-start', id: 'resp_abc', model: 'acme/chat-large', created: 1700000000 };
          if (e.type === 'finish') {
            const raw = 'completed';
            return {
              ...e,
              finishReason: { ...e.finishReason, raw },
              usage: { ...e.usage, cachedInputTokens: 0, reasoningTokens: 0 },
            };
          }
          return e;
        });
      for (const split of Object.values(SPLITS)) {
        const back = await collect(
          parseSseBytes(replayBytes(bytes, split)).pipeThrough(
            toTransformStream(createResponsesStreamDecoder({ model: 'acme/chat-large' })),
          ),
        );
        // Tool blocks end in the order the encoder ended them.
        expect(back).toEqual(expected as StreamEvent[]);
      }
    }
  });

  test('the round trip of an error keeps the error', async () => {
    const bytes = new TextEncoder().encode(
      await encode([start, { type: 'error', error: { code: 'upstream_error', message: 'boom' } }]),
    );
    const back = await collect(
      parseSseBytes(replayBytes(bytes, [5])).pipeThrough(
        toTransformStream(createResponsesStreamDecoder({ model: 'm' })),
      ),
    );
    expect(back).toEqual([
      { type: 'message-start', id: 'resp_abc', model: 'm', created: 1700000000 },
      { type: 'error', error: { code: 'upstream_error', message: 'boom' } },
    ]);
  });

  test('openai SDK: responses.stream().finalResponse() accepts text and parallel tool calls', async () => {
    const text = sdkOver(await encode(TEXT)).responses.stream({ model: 'acme/chat-large', input: 'hi' });
    const deltas: string[] = [];
    text.on('response.output_text.delta', (e) => deltas.push(e.delta));
    const final = await text.finalResponse();
    expect(deltas).toEqual(['Hello', ' world']);
    expect(final.output_text).toBe('Hello world');
    expect(final.status).toBe('completed');
    expect(final.usage?.output_tokens).toBe(3);

    const tools = await sdkOver(await encode(TOOLS))
      .responses.stream({ model: 'acme/chat-large', input: 'hi' })
      .finalResponse();
    expect(
      tools.output.map((item) => (item.type === 'function_call' ? [item.call_id, item.arguments] : [item.type])),
    ).toEqual([['message'], ['call_a', '{"city":"Paris"}'], ['call_b', '{"tz":"UTC"}']]);
  });

  test('openai SDK: iterating a stream create() sees typed events in order', async () => {
    const stream = await sdkOver(await encode(TEXT)).responses.create({
      model: 'acme/chat-large',
      input: 'hi',
      stream: true,
    });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.completed');
  });

  test('openai SDK: an error event makes the client fail, not complete', async () => {
    const body = await encode([
      start,
      { type: 'text-start', index: 0 },
      { type: 'text-delta', index: 0, delta: 'x' },
      { type: 'error', error: { code: 'stream_truncated', message: 'the upstream stream ended early' } },
    ]);
    const stream = sdkOver(body).responses.stream({ model: 'acme/chat-large', input: 'hi' });
    await expect(stream.finalResponse()).rejects.toThrow('the upstream stream ended early');
  });
});

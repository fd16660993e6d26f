import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, test } from 'bun:test';
import {
  createAnthropicStreamDecoder,
  createAnthropicStreamEncoder,
} from '../../translators/anthropic-messages/index.ts';
import type { StreamEvent } from '../../translators/canonical/stream.ts';
import { parseSseBytes } from '../../translators/common/sse.ts';
import { toTransformStream } from '../../translators/common/stream-translator.ts';
import { collect } from '../helpers/replay-sse.ts';

const MODEL = 'acme/chat-large';
const ID = 'msg_gateway0001';

function source<T>(items: T[]): ReadableStream<T> {
  return new ReadableStream<T>({
    start(controller) {
      for (const item of items) controller.enqueue(item);
      controller.close();
    },
  });
}

async function encode(events: StreamEvent[]): Promise<string[]> {
  return collect(source(events).pipeThrough(toTransformStream(createAnthropicStreamEncoder({ id: ID, model: MODEL }))));
}

/** The SSE text split into {event, data} pairs. */
function parse(chunks: string[]): Array<{ event: string; data: Record<string, unknown> }> {
  return chunks
    .join('')
    .split('\n\n')
    .filter(Boolean)
    .map((frame) => {
      const [eventLine, dataLine] = frame.split('\n');
      return {
        event: eventLine!.replace('event: ', ''),
        data: JSON.parse(dataLine!.replace('data: ', '')) as Record<string, unknown>,
      };
    });
}

const usage = (input: number, output: number) => ({
  inputTokens: input,
  outputTokens: output,
  totalTokens: input + output,
});

const TEXT: StreamEvent[] = [
  { type: 'message-start', id: 'chatcmpl-up', model: MODEL, created: 1, usage: { inputTokens: 10 } },
  { type: 'text-start', index: 0 },
  { type: 'text-delta', index: 0, delta: 'Hi' },
  { type: 'text-delta', index: 0, delta: ' there' },
  { type: 'text-end', index: 0 },
  { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(10, 2) },
];

/** OpenAI-style upstream: input tokens unknown at the start; two tool calls whose deltas interleave. */
const PARALLEL: StreamEvent[] = [
  { type: 'message-start', id: 'chatcmpl-up', model: MODEL, created: 1 },
  { type: 'tool-call-start', index: 0, id: 'call_A', name: 'get_weather' },
  { type: 'tool-call-delta', index: 0, delta: '{"city":' },
  { type: 'tool-call-start', index: 1, id: 'call_B', name: 'get_time' },
  { type: 'tool-call-delta', index: 1, delta: '{"tz":' },
  { type: 'tool-call-delta', index: 0, delta: '"Paris"}' },
  { type: 'tool-call-delta', index: 1, delta: '"CET"}' },
  { type: 'tool-call-end', index: 1 },
  { type: 'tool-call-end', index: 0 },
  { type: 'usage', usage: { cachedInputTokens: 64 } },
  {
    type: 'finish',
    finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
    usage: { ...usage(100, 30), cachedInputTokens: 64 },
  },
];

describe('Anthropic stream encoder', () => {
  test('a text stream is the exact documented event sequence', async () => {
    const text = (await encode(TEXT)).join('');
    const nullUsage =
      'cache_creation":null,"output_tokens":1,"output_tokens_details":null,"server_tool_use":null,"service_tier":null,"inference_geo":null,"speed":null';
    expect(text).toBe(
      'event: message_start\n' +
        `data: {"type":"message_start","message":{"id":"${ID}","type":"message","role":"assistant","model":"${MODEL}","content":[],"stop_reason":null,"stop_sequence":null,"stop_details":null,"container":null,"diagnostics":null,"usage":{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"${nullUsage}}}}\n\n` +
        'event: ping\ndata: {"type":"ping"}\n\n' +
        'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n' +
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}\n\n' +
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" there"}}\n\n' +
        'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n' +
        'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null,"stop_details":null,"container":null},"usage":{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":2,"output_tokens_details":null,"server_tool_use":null}}\n\n' +
        'event: message_stop\ndata: {"type":"message_stop"}\n\n',
    );
  });

  test('interleaved tool calls are serialised one block at a time; the final usage carries the real input tokens', async () => {
    const frames = parse(await encode(PARALLEL));
    expect(frames.map((f) => f.event)).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    const message = frames[0]!.data.message as { usage: Record<string, unknown> };
    expect(message.usage.input_tokens).toBe(0);
    expect(frames.slice(2, 10).map((f) => f.data)).toEqual([
      {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'tool_use', id: 'call_A', name: 'get_weather', input: {}, caller: { type: 'direct' } },
      },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"city":' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '"Paris"}' } },
      { type: 'content_block_stop', index: 0 },
      {
        type: 'content_block_start',
        index: 1,
        content_block: { type: 'tool_use', id: 'call_B', name: 'get_time', input: {}, caller: { type: 'direct' } },
      },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"tz":' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '"CET"}' } },
      { type: 'content_block_stop', index: 1 },
    ]);
    expect(frames[10]!.data).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'tool_use', stop_sequence: null, stop_details: null, container: null },
      usage: {
        input_tokens: 36,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 64,
        output_tokens: 30,
        output_tokens_details: null,
        server_tool_use: null,
      },
    });
  });

  test('output is incremental: the head block streams before the message ends', async () => {
    const encoder = toTransformStream(createAnthropicStreamEncoder({ id: ID, model: MODEL }));
    const writer = encoder.writable.getWriter();
    const reader = encoder.readable.getReader();
    const write = (event: StreamEvent) => void writer.write(event).catch(() => undefined);
    write(TEXT[0]!);
    expect((await reader.read()).value).toStartWith('event: message_start\n');
    expect((await reader.read()).value).toBe('event: ping\ndata: {"type":"ping"}\n\n');
    write(TEXT[1]!);
    write(TEXT[2]!);
    expect((await reader.read()).value).toStartWith('event: content_block_start\n');
    expect((await reader.read()).value).toContain('"text":"Hi"');
    await writer.abort().catch(() => undefined);
  });

  test('a stop-sequence finish names the sequence; a length finish is max_tokens', async () => {
    const stopSeq = parse(
      await encode([
        TEXT[0]!,
        { type: 'finish', finishReason: { unified: 'stop-sequence' }, stopSequence: '###', usage: usage(10, 1) },
      ]),
    );
    expect(stopSeq.at(-2)!.data.delta).toEqual({
      stop_reason: 'stop_sequence',
      stop_sequence: '###',
      stop_details: null,
      container: null,
    });
    const length = parse(
      await encode([
        TEXT[0]!,
        { type: 'finish', finishReason: { unified: 'length', raw: 'length' }, usage: usage(10, 1) },
      ]),
    );
    expect((length.at(-2)!.data.delta as Record<string, unknown>).stop_reason).toBe('max_tokens');
  });

  test('an error becomes event: error and the stream ends without message_stop', async () => {
    const frames = parse(
      await encode([
        ...TEXT.slice(0, 3),
        {
          type: 'error',
          error: { code: 'stream_truncated', message: 'the upstream stream ended without message_stop' },
        },
        { type: 'text-delta', index: 0, delta: 'ignored' },
      ]),
    );
    expect(frames.map((f) => f.event)).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      'content_block_delta',
      'error',
    ]);
    expect(frames.at(-1)!.data).toEqual({
      type: 'error',
      error: { type: 'api_error', message: 'the upstream stream ended without message_stop' },
    });
    const overloaded = parse(
      await encode([TEXT[0]!, { type: 'error', error: { code: 'upstream_overloaded', message: 'Overloaded' } }]),
    );
    expect(overloaded.at(-1)!.data).toEqual({
      type: 'error',
      error: { type: 'overloaded_error', message: 'Overloaded' },
    });
  });

  test('a canonical stream that stops without a finish still ends with an error event', async () => {
    const frames = parse(await encode(TEXT.slice(0, 3)));
    expect(frames.at(-1)!.event).toBe('error');
    expect(frames.some((f) => f.event === 'message_stop')).toBe(false);
  });
});

describe('Anthropic stream encoder → decoder round trip', () => {
  async function roundTrip(events: StreamEvent[]): Promise<StreamEvent[]> {
    const bytes = new TextEncoder().encode((await encode(events)).join(''));
    return collect(
      parseSseBytes(source([bytes])).pipeThrough(
        toTransformStream(createAnthropicStreamDecoder({ model: MODEL, created: 1 })),
      ),
    );
  }

  test('text', async () => {
    expect(await roundTrip(TEXT)).toEqual([
      { type: 'message-start', id: ID, model: MODEL, created: 1, usage: { inputTokens: 10 } },
      ...TEXT.slice(1, 5),
      { type: 'usage', usage: usage(10, 2) },
      { type: 'finish', finishReason: { unified: 'stop', raw: 'end_turn' }, usage: usage(10, 2) },
    ]);
  });

  test('interleaved tool calls come back serialised, with the full usage', async () => {
    expect(await roundTrip(PARALLEL)).toEqual([
      { type: 'message-start', id: ID, model: MODEL, created: 1, usage: { inputTokens: 0 } },
      { type: 'tool-call-start', index: 0, id: 'call_A', name: 'get_weather' },
      { type: 'tool-call-delta', index: 0, delta: '{"city":' },
      { type: 'tool-call-delta', index: 0, delta: '"Paris"}' },
      { type: 'tool-call-end', index: 0 },
      { type: 'tool-call-start', index: 1, id: 'call_B', name: 'get_time' },
      { type: 'tool-call-delta', index: 1, delta: '{"tz":' },
      { type: 'tool-call-delta', index: 1, delta: '"CET"}' },
      { type: 'tool-call-end', index: 1 },
      { type: 'usage', usage: { ...usage(100, 30), cachedInputTokens: 64 } },
      {
        type: 'finish',
        finishReason: { unified: 'tool-calls', raw: 'tool_use' },
        usage: { ...usage(100, 30), cachedInputTokens: 64 },
      },
    ]);
  });

  test('an error round-trips as an error', async () => {
    const events = await roundTrip([
      TEXT[0]!,
      { type: 'error', error: { code: 'upstream_overloaded', message: 'Overloaded' } },
    ]);
    expect(events.at(-1)).toEqual({ type: 'error', error: { code: 'upstream_overloaded', message: 'Overloaded' } });
  });
});

describe('@anthropic-ai/sdk reads the encoder output', () => {
  function client(events: StreamEvent[]): Anthropic {
    const fetch = async () => {
      const body = source(events)
        .pipeThrough(toTransformStream(createAnthropicStreamEncoder({ id: ID, model: MODEL })))
        .pipeThrough(new TextEncoderStream());
      return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
    };
    return new Anthropic({ apiKey: 'test', baseURL: 'http://gateway.test', fetch, maxRetries: 0 });
  }
  const params = { model: MODEL, max_tokens: 100, messages: [{ role: 'user' as const, content: 'hi' }] };

  test('finalMessage() assembles the serialised blocks and the final usage', async () => {
    const message = await client(PARALLEL).messages.stream(params).finalMessage();
    expect(message.id).toBe(ID);
    expect(message.model).toBe(MODEL);
    expect(message.stop_reason).toBe('tool_use');
    expect(message.content.map((block) => (block.type === 'tool_use' ? [block.id, block.input] : block.type))).toEqual([
      ['call_A', { city: 'Paris' }],
      ['call_B', { tz: 'CET' }],
    ]);
    // Each block as the non-streamed answer has it, `caller` included.
    for (const block of message.content)
      if (block.type === 'tool_use') expect(block.caller).toEqual({ type: 'direct' });
    expect(message.usage.input_tokens).toBe(36);
    expect(message.usage.cache_read_input_tokens).toBe(64);
    expect(message.usage.output_tokens).toBe(30);
  });

  test('finalMessage() rejects on an error event', async () => {
    const stream = client([
      TEXT[0]!,
      TEXT[1]!,
      { type: 'error', error: { code: 'upstream_overloaded', message: 'Overloaded' } },
    ]).messages.stream(params);
    const error = await stream.finalMessage().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect(String(error)).toContain('Overloaded');
  });
});

import { describe, expect, test } from 'bun:test';
import {
  createAnthropicStreamDecoder,
  createAnthropicStreamEncoder,
  decodeAnthropicResponse,
  encodeAnthropicResponse,
} from '../../translators/anthropic-messages/index.ts';
import type { StreamEvent } from '../../translators/canonical/stream.ts';
import { createChatStreamDecoder, createChatStreamEncoder } from '../../translators/chat-completions/index.ts';
import { createResponsesStreamEncoder } from '../../translators/responses/index.ts';
import { parseSseBytes, type EventSourceMessage } from '../../translators/common/sse.ts';
import { toTransformStream, type StreamTranslator } from '../../translators/common/stream-translator.ts';
import { type FixtureKind, type Raw, rawEvents as readRaw, truthOf } from '../helpers/recorded-truth.ts';
import { collect, readFixture, replayBytes, SPLITS } from '../helpers/replay-sse.ts';

const rawEvents = (file: string) => readRaw(`${DIR}/${file}`);

/**
 * Streams recorded from the real APIs (tests/fixtures/recorded/README.md), decoded under every
 * split and encoded again for each client format. What each recording says is read from its raw
 * lines here, independently of the decoders, and compared with what the canonical events and the
 * client streams carry.
 */

const DIR = `${import.meta.dir}/../fixtures/recorded`;
const MODEL = 'gw/model';

type Upstream = FixtureKind;
const RECORDINGS: Record<string, Upstream> = {
  'anthropic-text.sse': 'anthropic',
  'anthropic-tool-no-args.sse': 'anthropic',
  'anthropic-thinking.sse': 'anthropic',
  'anthropic-cache-usage.sse': 'anthropic',
  'mistral-tool-call-no-index.sse': 'chat',
  'compat-tool-call-cached.sse': 'chat',
  'xai-text.sse': 'chat',
  'xai-reasoning-tool-call.sse': 'chat',
};

function decoderFor(kind: Upstream): StreamTranslator<EventSourceMessage, StreamEvent> {
  return kind === 'anthropic'
    ? createAnthropicStreamDecoder({ model: MODEL, created: 1 })
    : createChatStreamDecoder({ model: MODEL, created: 1 });
}

async function decode(kind: Upstream, bytes: Uint8Array, split: number[]): Promise<StreamEvent[]> {
  return collect(parseSseBytes(replayBytes(bytes, split)).pipeThrough(toTransformStream(decoderFor(kind))));
}

async function encode(events: StreamEvent[], encoder: StreamTranslator<StreamEvent, string>): Promise<Raw[]> {
  const source = new ReadableStream<StreamEvent>({
    start(controller) {
      for (const event of events) controller.enqueue(event);
      controller.close();
    },
  });
  const text = (await collect(source.pipeThrough(toTransformStream(encoder)))).join('');
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]')
    .map((line) => JSON.parse(line.slice(6)));
}

describe('recorded upstream streams', () => {
  for (const [file, kind] of Object.entries(RECORDINGS)) {
    test(`${file}: every split decodes alike, and the canonical stream says what the recording says`, async () => {
      const bytes = await readFixture(`${DIR}/${file}`);
      const truth = truthOf(kind, await rawEvents(file));
      const whole = await decode(kind, bytes, SPLITS.whole!);
      for (const split of Object.values(SPLITS)) expect(await decode(kind, bytes, split)).toEqual(whole);

      const of = <T extends StreamEvent['type']>(type: T) =>
        whole.filter((e): e is Extract<StreamEvent, { type: T }> => e.type === type);
      expect(
        of('text-delta')
          .map((e) => e.delta)
          .join(''),
      ).toBe(truth.text);
      expect(
        of('reasoning-delta')
          .map((e) => e.delta)
          .join(''),
      ).toBe(truth.reasoning);
      expect(of('reasoning-end').flatMap((e) => (e.signature ? [e.signature] : []))).toEqual(truth.signatures);
      expect(of('tool-call-start').map((e) => e.name)).toEqual(truth.toolNames);
      // Every tool call's arguments are JSON, even when the upstream streamed none.
      for (const start of of('tool-call-start')) {
        const args = of('tool-call-delta')
          .filter((d) => d.index === start.index)
          .map((d) => d.delta)
          .join('');
        expect(() => JSON.parse(args)).not.toThrow();
      }
      const finish = of('finish')[0];
      expect(finish?.usage.inputTokens).toBe(truth.input);
      expect(finish?.usage.cachedInputTokens ?? 0).toBe(truth.cacheRead);
      expect(finish?.usage.cacheWriteTokens ?? 0).toBe(truth.cacheWrite);
    });

    test(`${file}: each client format's stream carries the text, reasoning, calls and cache figures`, async () => {
      const truth = truthOf(kind, await rawEvents(file));
      const events = await decode(kind, await readFixture(`${DIR}/${file}`), SPLITS.whole!);

      const chat = await encode(
        events,
        createChatStreamEncoder({ id: 'chatcmpl-1', model: MODEL, created: 1, includeUsage: true }),
      );
      const chatDeltas = chat.flatMap((c) => c.choices ?? []).map((c: Raw) => c.delta);
      expect(chatDeltas.map((d: Raw) => d.content ?? '').join('')).toBe(truth.text);
      expect(chatDeltas.map((d: Raw) => d.reasoning_content ?? '').join('')).toBe(truth.reasoning);
      const chatArgs = new Map<number, string>();
      for (const call of chatDeltas.flatMap((d: Raw) => d.tool_calls ?? []))
        chatArgs.set(call.index, (chatArgs.get(call.index) ?? '') + (call.function?.arguments ?? ''));
      expect(chatArgs.size).toBe(truth.toolNames.length);
      for (const args of chatArgs.values()) expect(() => JSON.parse(args)).not.toThrow();
      const chatUsage = chat.at(-1)?.usage;
      expect(chatUsage.prompt_tokens).toBe(truth.input);
      expect(chatUsage.prompt_tokens_details?.cached_tokens ?? 0).toBe(truth.cacheRead);

      const responses = await encode(
        events,
        createResponsesStreamEncoder({ responseId: 'resp_1', model: MODEL, createdAt: 1 }),
      );
      const done = responses.at(-1)?.response;
      expect(done.usage.input_tokens).toBe(truth.input);
      expect(done.usage.input_tokens_details.cached_tokens).toBe(truth.cacheRead);
      const calls = done.output.filter((i: Raw) => i.type === 'function_call');
      expect(calls.map((c: Raw) => c.name)).toEqual(truth.toolNames);
      for (const call of calls) expect(() => JSON.parse(call.arguments)).not.toThrow();
      const reasoning = done.output.filter((i: Raw) => i.type === 'reasoning');
      expect(reasoning.map((r: Raw) => r.content.map((c: Raw) => c.text).join('')).join('')).toBe(truth.reasoning);
      expect(reasoning.flatMap((r: Raw) => (r.encrypted_content ? [r.encrypted_content] : []))).toEqual(
        truth.signatures.map((s) => `sig:${s}`),
      );

      const messages = await encode(events, createAnthropicStreamEncoder({ id: 'msg_1', model: MODEL }));
      const signatures = messages.filter((e) => e.delta?.type === 'signature_delta').map((e) => e.delta.signature);
      expect(signatures).toEqual(truth.signatures);
      const final = messages.find((e) => e.type === 'message_delta')?.usage;
      expect(final.input_tokens + final.cache_read_input_tokens + final.cache_creation_input_tokens).toBe(truth.input);
      expect(final.cache_read_input_tokens).toBe(truth.cacheRead);
      expect(final.cache_creation_input_tokens).toBe(truth.cacheWrite);
    });
  }

  test('xAI counts reasoning outside completion_tokens: it is added back to the output', async () => {
    const events = await decode('chat', await readFixture(`${DIR}/xai-text.sse`), SPLITS.whole!);
    const finish = events.find((e) => e.type === 'finish');
    // prompt 12, completion 1, reasoning 290, total 303 as recorded.
    expect(finish?.type === 'finish' && finish.usage).toMatchObject({
      inputTokens: 12,
      outputTokens: 291,
      reasoningTokens: 290,
      totalTokens: 303,
    });
  });

  test('a non-streamed thinking turn keeps its signature and its argument-less call through a Message', async () => {
    const body = await Bun.file(`${DIR}/anthropic-thinking-tool-call.json`).json();
    const message = encodeAnthropicResponse(decodeAnthropicResponse(body, MODEL, { created: 1 }));
    expect(message.content[0]).toEqual(body.content[0]);
    expect(message.content[1]).toMatchObject({ type: 'tool_use', id: body.content[1].id, input: {} });
    expect(message.usage.output_tokens_details).toEqual({ thinking_tokens: 18 });
  });
});

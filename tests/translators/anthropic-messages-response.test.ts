import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, test } from 'bun:test';
import {
  decodeAnthropicResponse,
  encodeAnthropicResponse,
  fromAnthropicStopReason,
  fromAnthropicUsage,
  toAnthropicStopReason,
  toAnthropicUsage,
} from '../../translators/anthropic-messages/index.ts';
import type { CanonicalResponse } from '../../translators/canonical/response.ts';

const FIXTURES = `${import.meta.dir}/../fixtures/anthropic-messages`;
const MODEL = 'anthropic/claude-sonnet';
const fixture = (name: string): Promise<unknown> => Bun.file(`${FIXTURES}/${name}`).json();

describe('decodeAnthropicResponse', () => {
  test('text with cache usage: input counts every input token, cache reads and writes are told apart', async () => {
    expect(decodeAnthropicResponse(await fixture('response-text.json'), MODEL, { created: 1700000000 })).toEqual({
      id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
      model: MODEL,
      created: 1700000000,
      content: [{ type: 'text', text: 'Hello! How can I help you today?' }],
      finishReason: { unified: 'stop', raw: 'end_turn' },
      usage: { inputTokens: 2112, outputTokens: 9, totalTokens: 2121, cachedInputTokens: 2000, cacheWriteTokens: 100 },
    });
  });

  test('cache writes are not folded into input_tokens when the message is encoded again', async () => {
    const res = decodeAnthropicResponse(await fixture('response-text.json'), MODEL, { created: 1 });
    const usage = encodeAnthropicResponse(res).usage;
    expect([usage.input_tokens, usage.cache_creation_input_tokens, usage.cache_read_input_tokens]).toEqual([
      12, 100, 2000,
    ]);
  });

  test('tool use: thinking kept with its signature, input objects become arguments text', async () => {
    const res = decodeAnthropicResponse(await fixture('response-tool-use.json'), MODEL, { created: 1 });
    expect(res.content).toEqual([
      { type: 'reasoning', text: 'I should call the tool.', signature: 'EqQBCgIYAhIM' },
      { type: 'text', text: "I'll check the weather in both cities." },
      { type: 'tool-call', id: 'toolu_01Paris', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'tool-call', id: 'toolu_01Tokyo', name: 'get_weather', arguments: '{"city":"Tokyo","unit":"c"}' },
    ]);
    expect(res.finishReason).toEqual({ unified: 'tool-calls', raw: 'tool_use' });
    expect(res.usage).toEqual({ inputTokens: 412, outputTokens: 93, totalTokens: 505, reasoningTokens: 20 });
  });

  test('stop sequence and garbage', () => {
    const res = decodeAnthropicResponse(
      {
        id: 'msg_1',
        content: [{ type: 'text', text: 'a' }],
        stop_reason: 'stop_sequence',
        stop_sequence: '###',
        usage: { input_tokens: 1, output_tokens: 1 },
      },
      MODEL,
      { created: 1 },
    );
    expect(res.finishReason).toEqual({ unified: 'stop-sequence', raw: 'stop_sequence' });
    expect(res.stopSequence).toBe('###');
    expect(() => decodeAnthropicResponse('<html>', MODEL)).toThrow(
      'invalid upstream Anthropic body: not a JSON object',
    );
    expect(() =>
      decodeAnthropicResponse({ type: 'error', error: { type: 'api_error', message: 'boom' } }, MODEL),
    ).toThrow('upstream error: boom');
    expect(() =>
      decodeAnthropicResponse({ id: 'msg_1', content: [{ type: 'tool_use', id: 'x', input: {} }] }, MODEL),
    ).toThrow('tool_use without id or name');
  });
});

describe('encodeAnthropicResponse', () => {
  const res: CanonicalResponse = {
    id: 'chatcmpl-upstream',
    model: MODEL,
    created: 1,
    content: [
      { type: 'text', text: 'Calling.' },
      { type: 'tool-call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
    ],
    finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
    usage: { inputTokens: 100, outputTokens: 20, totalTokens: 120, cachedInputTokens: 40, reasoningTokens: 5 },
  };

  test('every field the SDK types as required, prefix-correct id, gateway model', () => {
    const message = encodeAnthropicResponse({ ...res, id: 'msg_fixed' });
    expect(message).toEqual({
      id: 'msg_fixed',
      type: 'message',
      role: 'assistant',
      model: MODEL,
      content: [
        { type: 'text', text: 'Calling.', citations: null },
        { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' }, caller: { type: 'direct' } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      stop_details: null,
      container: null,
      diagnostics: null,
      usage: {
        input_tokens: 60,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 40,
        cache_creation: null,
        output_tokens: 20,
        output_tokens_details: { thinking_tokens: 5 },
        server_tool_use: null,
        service_tier: null,
        inference_geo: null,
        speed: null,
      },
    });
    expect(encodeAnthropicResponse(res).id).toMatch(/^msg_[0-9A-Za-z]{24}$/);
  });

  test('stop_sequence only for a stop-sequence ending', () => {
    const text = { ...res, content: [{ type: 'text' as const, text: 'x' }] };
    expect(
      encodeAnthropicResponse({ ...text, finishReason: { unified: 'stop-sequence' }, stopSequence: 'END' }),
    ).toMatchObject({
      stop_reason: 'stop_sequence',
      stop_sequence: 'END',
    });
    expect(encodeAnthropicResponse({ ...text, finishReason: { unified: 'stop' }, stopSequence: 'END' })).toMatchObject({
      stop_reason: 'end_turn',
      stop_sequence: null,
    });
  });

  test('the SDK client accepts the encoded body', async () => {
    const body = encodeAnthropicResponse({ ...res, id: 'msg_sdk' });
    const fetch = async () =>
      new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
    const client = new Anthropic({ apiKey: 'test', baseURL: 'http://gateway.test', fetch, maxRetries: 0 });
    const message = await client.messages.create({
      model: MODEL,
      max_tokens: 10,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(message.id).toBe('msg_sdk');
    expect(message.content[1]).toMatchObject({ type: 'tool_use', input: { city: 'Paris' } });
  });

  test('decode(encode(x)) keeps content, finish and usage', () => {
    const round = decodeAnthropicResponse(encodeAnthropicResponse({ ...res, id: 'msg_rt' }), MODEL, { created: 1 });
    expect(round).toEqual({ ...res, id: 'msg_rt', finishReason: { unified: 'tool-calls', raw: 'tool_use' } });
  });
});

describe('finish-reason and usage mappers', () => {
  test('stop reasons both ways, keeping Anthropic-only raw reasons', () => {
    expect(toAnthropicStopReason({ unified: 'stop', raw: 'stop' })).toBe('end_turn');
    expect(toAnthropicStopReason({ unified: 'length', raw: 'length' })).toBe('max_tokens');
    expect(toAnthropicStopReason({ unified: 'content-filter', raw: 'content_filter' })).toBe('refusal');
    expect(toAnthropicStopReason({ unified: 'error' })).toBe('end_turn');
    expect(toAnthropicStopReason(fromAnthropicStopReason('pause_turn'))).toBe('pause_turn');
    expect(toAnthropicStopReason(fromAnthropicStopReason('model_context_window_exceeded'))).toBe(
      'model_context_window_exceeded',
    );
    expect(toAnthropicStopReason({ unified: 'stop', raw: 'max_tokens' })).toBe('end_turn');
  });

  test('usage both ways', () => {
    expect(fromAnthropicUsage(null)).toEqual({ inputTokens: 0, outputTokens: 0, totalTokens: 0 });
    expect(
      fromAnthropicUsage({
        input_tokens: 5,
        cache_creation_input_tokens: null,
        cache_read_input_tokens: 0,
        output_tokens: 2,
      }),
    ).toEqual({
      inputTokens: 5,
      outputTokens: 2,
      totalTokens: 7,
    });
    // The writes kept for an hour are told apart: they cost more (pricing.cache_write_1h_per_mtok).
    expect(
      fromAnthropicUsage({
        input_tokens: 10,
        cache_creation_input_tokens: 600,
        cache_creation: { ephemeral_5m_input_tokens: 200, ephemeral_1h_input_tokens: 400 },
        cache_read_input_tokens: 0,
        output_tokens: 2,
      }),
    ).toEqual({
      inputTokens: 610,
      outputTokens: 2,
      totalTokens: 612,
      cacheWriteTokens: 600,
      cacheWrite1hTokens: 400,
    });
    expect(toAnthropicUsage({ inputTokens: 10, outputTokens: 3, totalTokens: 13 })).toMatchObject({
      input_tokens: 10,
      cache_read_input_tokens: 0,
      output_tokens: 3,
      output_tokens_details: null,
    });
  });
});

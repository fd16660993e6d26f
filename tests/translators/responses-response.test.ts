import { describe, expect, test } from 'bun:test';
import OpenAI from 'openai';
import type { CanonicalResponse } from '../../translators/canonical/response.ts';
import {
  decodeResponsesRequest,
  decodeResponsesResponse,
  encodeResponsesResponse,
  fromResponsesStatus,
  fromResponsesUsage,
  itemIdsFor,
  responseOutputItems,
  toResponsesEnding,
  toResponsesUsage,
} from '../../translators/responses/index.ts';

const FIXTURES = `${import.meta.dir}/../fixtures/responses`;
const fixture = async (name: string): Promise<unknown> => Bun.file(`${FIXTURES}/${name}`).json();

const canonical: CanonicalResponse = {
  id: 'resp_abc123',
  model: 'acme/chat-large',
  created: 1741476542,
  content: [
    { type: 'text', text: 'Let me look.' },
    { type: 'tool-call', id: 'call_1', name: 'lookup', arguments: '{"q":"x"}' },
  ],
  finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
  usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15, cachedInputTokens: 4 },
};

describe('decodeResponsesResponse', () => {
  test('a text response', async () => {
    const res = decodeResponsesResponse(await fixture('response-text.json'), 'acme/chat-large');
    expect(res).toEqual({
      id: 'resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b',
      model: 'acme/chat-large',
      created: 1741476542,
      content: [
        {
          type: 'text',
          text: 'In a peaceful grove beneath a silver moon, a unicorn named Lumina discovered a hidden pool.',
        },
      ],
      finishReason: { unified: 'stop', raw: 'completed' },
      usage: { inputTokens: 36, outputTokens: 87, totalTokens: 123, cachedInputTokens: 0, reasoningTokens: 0 },
    });
  });

  test('function calls (reasoning skipped) finish as tool-calls, with cached and reasoning tokens', async () => {
    const res = decodeResponsesResponse(await fixture('response-tool-calls.json'), 'acme/chat-large');
    expect(res.content).toEqual([
      {
        type: 'tool-call',
        id: 'call_unLAR8MvFNptuiZK6K6HCy5k',
        name: 'get_current_weather',
        arguments: '{"location":"Boston, MA","unit":"celsius"}',
      },
      {
        type: 'tool-call',
        id: 'call_9xY2',
        name: 'get_current_weather',
        arguments: '{"location":"Austin, TX","unit":"celsius"}',
      },
    ]);
    expect(res.finishReason).toEqual({ unified: 'tool-calls', raw: 'completed' });
    expect(res.usage).toEqual({
      inputTokens: 291,
      outputTokens: 43,
      totalTokens: 334,
      cachedInputTokens: 256,
      reasoningTokens: 12,
    });
  });

  test('incomplete with max_output_tokens is a length finish; refusals are kept as text', async () => {
    const res = decodeResponsesResponse(await fixture('response-incomplete.json'), 'g');
    expect(res.finishReason).toEqual({ unified: 'length', raw: 'incomplete:max_output_tokens' });
    expect(res.content).toEqual([
      { type: 'text', text: 'Once upon a time' },
      { type: 'text', text: ' (cut)' },
    ]);
    expect(res.usage).toEqual({ inputTokens: 12, outputTokens: 16, totalTokens: 28 });
  });

  test('a body that is not a response throws', () => {
    expect(() => decodeResponsesResponse({ id: 'x' }, 'g')).toThrow('invalid upstream Responses body');
    expect(() => decodeResponsesResponse({ id: 'x', output: [{ type: 'function_call', name: 'f' }] }, 'g')).toThrow(
      'invalid upstream Responses output',
    );
  });
});

describe('encodeResponsesResponse', () => {
  test('the full response object, with echoed settings and derived item ids', () => {
    const { value } = decodeResponsesRequest({
      model: 'acme/chat-large',
      input: 'hi',
      instructions: 'be brief',
      tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object' }, strict: true }],
      temperature: 0.3,
      metadata: { k: 'v' },
      previous_response_id: 'resp_prev',
    });
    const body = encodeResponsesResponse(canonical, { ...value.echo, completedAt: 1741476550 });
    expect(body).toEqual({
      id: 'resp_abc123',
      object: 'response',
      created_at: 1741476542,
      status: 'completed',
      background: false,
      completed_at: 1741476550,
      error: null,
      incomplete_details: null,
      instructions: 'be brief',
      max_output_tokens: null,
      model: 'acme/chat-large',
      output: [
        {
          type: 'message',
          id: 'msg_abc123_0',
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'Let me look.', annotations: [], logprobs: [] }],
        },
        {
          type: 'function_call',
          id: 'fc_abc123_1',
          call_id: 'call_1',
          name: 'lookup',
          arguments: '{"q":"x"}',
          status: 'completed',
        },
      ],
      parallel_tool_calls: true,
      previous_response_id: 'resp_prev',
      reasoning: { effort: null, summary: null },
      service_tier: 'default',
      store: true,
      temperature: 0.3,
      text: { format: { type: 'text' } },
      tool_choice: 'auto',
      tools: [{ type: 'function', name: 'lookup', description: null, parameters: { type: 'object' }, strict: true }],
      top_p: 1,
      truncation: 'disabled',
      usage: {
        input_tokens: 10,
        input_tokens_details: { cached_tokens: 4, cache_write_tokens: 0 },
        output_tokens: 5,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 15,
      },
      metadata: { k: 'v' },
    });
  });

  test('length and content-filter endings are incomplete, an error ending failed', () => {
    const length = encodeResponsesResponse({ ...canonical, finishReason: { unified: 'length' } });
    expect([length.status, length.incomplete_details, length.error]).toEqual([
      'incomplete',
      { reason: 'max_output_tokens' },
      null,
    ]);
    // The item the cap cut is incomplete, those before it completed (as the stream writes them).
    expect(length.output.map((item) => item.status)).toEqual(['completed', 'incomplete']);
    const filtered = encodeResponsesResponse({ ...canonical, finishReason: { unified: 'content-filter' } });
    expect([filtered.status, filtered.incomplete_details]).toEqual(['incomplete', { reason: 'content_filter' }]);
    const failed = encodeResponsesResponse({ ...canonical, finishReason: { unified: 'error' } });
    expect(failed.status).toBe('failed');
    expect(failed.error?.code).toBe('server_error');
    expect(failed.completed_at).toBeUndefined();
  });

  test('a given response id and item id minting win', () => {
    let n = 0;
    const body = encodeResponsesResponse(canonical, { responseId: 'resp_given', itemId: (kind) => `${kind}_${++n}` });
    expect(body.id).toBe('resp_given');
    expect(body.output.map((item) => item.id)).toEqual(['msg_1', 'fc_2']);
  });

  test('responseOutputItems matches the encoded output (what the service stores)', () => {
    expect(responseOutputItems(canonical)).toEqual(encodeResponsesResponse(canonical).output);
    expect(itemIdsFor('resp_zz')('fc', 3)).toBe('fc_zz_3');
  });

  test('stored output items substituted for item references decode as the earlier assistant turn', () => {
    const stored = JSON.parse(JSON.stringify(responseOutputItems(canonical))) as unknown[];
    const { value } = decodeResponsesRequest({
      model: 'acme/chat-large',
      input: [
        { role: 'user', content: 'look x up' },
        ...stored,
        { type: 'function_call_output', call_id: 'call_1', output: 'found' },
      ],
    });
    expect(value.request.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'look x up' }] },
      { role: 'assistant', content: canonical.content },
      {
        role: 'tool',
        content: [{ type: 'tool-result', toolCallId: 'call_1', content: [{ type: 'text', text: 'found' }] }],
      },
    ]);
  });

  test('round trip through decodeResponsesResponse', () => {
    const back = decodeResponsesResponse(
      JSON.parse(JSON.stringify(encodeResponsesResponse(canonical))),
      canonical.model,
    );
    expect(back).toEqual({
      ...canonical,
      finishReason: { unified: 'tool-calls', raw: 'completed' },
      usage: { ...canonical.usage, reasoningTokens: 0 },
    });
  });

  test("the body type-checks as the SDK's Response (output_text is added by the SDK)", () => {
    const body = encodeResponsesResponse(canonical);
    const usage = body.usage ?? toResponsesUsage(canonical.usage);
    const typed: OpenAI.Responses.Response = { ...body, usage, output_text: '' };
    const item: OpenAI.Responses.ResponseOutputItem | undefined = body.output[0];
    expect(typed.id).toBe('resp_abc123');
    expect(item?.type).toBe('message');
  });

  test('the openai SDK reads it, output_text included', async () => {
    const body = encodeResponsesResponse({
      ...canonical,
      content: [
        { type: 'text', text: 'Hello ' },
        { type: 'text', text: 'world' },
      ],
      finishReason: { unified: 'stop' },
    });
    const client = new OpenAI({
      apiKey: 'k',
      baseURL: 'http://gateway.test/v1',
      fetch: async () => Response.json(body),
    });
    const res = await client.responses.create({ model: 'acme/chat-large', input: 'hi' });
    expect(res.output_text).toBe('Hello world');
    expect(res.status).toBe('completed');
    expect(res.usage?.total_tokens).toBe(15);
  });
});

describe('finish reason and usage mappers', () => {
  test('canonical finish → status and incomplete details', () => {
    expect(toResponsesEnding({ unified: 'stop' })).toEqual({ status: 'completed', incompleteDetails: null });
    expect(toResponsesEnding({ unified: 'stop-sequence' })).toEqual({ status: 'completed', incompleteDetails: null });
    expect(toResponsesEnding({ unified: 'tool-calls' })).toEqual({ status: 'completed', incompleteDetails: null });
    expect(toResponsesEnding({ unified: 'length' })).toEqual({
      status: 'incomplete',
      incompleteDetails: { reason: 'max_output_tokens' },
    });
    expect(toResponsesEnding({ unified: 'content-filter' })).toEqual({
      status: 'incomplete',
      incompleteDetails: { reason: 'content_filter' },
    });
    expect(toResponsesEnding({ unified: 'error' })).toEqual({ status: 'failed', incompleteDetails: null });
  });

  test('status → canonical finish', () => {
    expect(fromResponsesStatus('completed', undefined, false).unified).toBe('stop');
    expect(fromResponsesStatus('completed', undefined, true).unified).toBe('tool-calls');
    expect(fromResponsesStatus('incomplete', 'content_filter', false).unified).toBe('content-filter');
    expect(fromResponsesStatus('failed', undefined, false).unified).toBe('error');
  });

  test('usage both ways; missing fields read 0 and totals are computed', () => {
    expect(toResponsesUsage({ inputTokens: 3, outputTokens: 4, totalTokens: 7, reasoningTokens: 2 })).toEqual({
      input_tokens: 3,
      input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
      output_tokens: 4,
      output_tokens_details: { reasoning_tokens: 2 },
      total_tokens: 7,
    });
    expect(fromResponsesUsage({ input_tokens: 3, output_tokens: 4 })).toEqual({
      inputTokens: 3,
      outputTokens: 4,
      totalTokens: 7,
    });
    expect(fromResponsesUsage(null)).toEqual({ inputTokens: 0, outputTokens: 0, totalTokens: 0 });
  });
});

import { describe, expect, test } from 'bun:test';
import OpenAI from 'openai';
import type { CanonicalResponse } from '../../translators/canonical/response.ts';
import {
  decodeChatResponse,
  encodeChatResponse,
  fromChatUsage,
  toChatFinishReason,
  toChatUsage,
} from '../../translators/chat-completions/index.ts';

const FIXTURES = `${import.meta.dir}/../fixtures/chat-completions`;
const fixture = async (name: string): Promise<unknown> => Bun.file(`${FIXTURES}/${name}`).json();
const OPTS = { id: 'chatcmpl-gw123', model: 'acme/chat-large', created: 1741570000 };

describe('decodeChatResponse', () => {
  test('a text completion with cached and reasoning tokens; the model becomes the gateway id', async () => {
    expect(decodeChatResponse(await fixture('response-text.json'), 'acme/chat-large')).toEqual({
      id: 'chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG',
      model: 'acme/chat-large',
      created: 1741570283,
      content: [{ type: 'text', text: 'The image shows a wooden boardwalk extending through a lush green marshland.' }],
      finishReason: { unified: 'stop', raw: 'stop' },
      usage: { inputTokens: 1117, outputTokens: 46, totalTokens: 1163, cachedInputTokens: 1024, reasoningTokens: 0 },
    });
  });

  test('parallel tool calls with null content', async () => {
    const res = decodeChatResponse(await fixture('response-tool-calls.json'), 'g');
    expect(res.content).toEqual([
      {
        type: 'tool-call',
        id: 'call_abc123',
        name: 'get_current_weather',
        arguments: '{\n"location": "Boston, MA"\n}',
      },
      { type: 'tool-call', id: 'call_def456', name: 'get_current_weather', arguments: '{"location": "Austin, TX"}' },
    ]);
    expect(res.finishReason).toEqual({ unified: 'tool-calls', raw: 'tool_calls' });
    expect(res.usage).toEqual({ inputTokens: 82, outputTokens: 17, totalTokens: 99, reasoningTokens: 0 });
  });

  test('compatible servers: length finish, refusal, array content, missing ids, missing usage', () => {
    const res = decodeChatResponse(
      {
        id: '',
        created: 5,
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: [
                { type: 'text', text: 'Once' },
                { type: 'text', text: ' upon' },
              ],
              refusal: 'no',
              tool_calls: [{ type: 'function', function: { name: 'f', arguments: { a: 1 } } }],
            },
            finish_reason: 'length',
          },
        ],
      },
      'g',
    );
    expect(res).toMatchObject({
      content: [
        { type: 'text', text: 'Once upon' },
        { type: 'text', text: 'no' },
        { type: 'tool-call', id: expect.stringMatching(/^call_/), name: 'f', arguments: '{"a":1}' },
      ],
      finishReason: { unified: 'length', raw: 'length' },
      usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
    });
    expect(res.id).toStartWith('chatcmpl-');
  });

  test('bodies that are not completions throw', () => {
    expect(() => decodeChatResponse('x', 'g')).toThrow('invalid upstream chat completion: not a JSON object');
    expect(() => decodeChatResponse({ id: 'x' }, 'g')).toThrow(
      'invalid upstream chat completion: choices is not an array',
    );
    expect(() => decodeChatResponse({ id: 'x', choices: [] }, 'g')).toThrow(
      'invalid upstream chat completion: no choices',
    );
    expect(() =>
      decodeChatResponse({ choices: [{ message: { tool_calls: [{ id: 'c', function: {} }] } }] }, 'g'),
    ).toThrow('tool_calls[0] has no function name');
    expect(() => decodeChatResponse({ error: { message: 'Rate limit reached', type: 'requests' } }, 'g')).toThrow(
      'upstream error: Rate limit reached',
    );
  });
});

describe('encodeChatResponse', () => {
  const canonical: CanonicalResponse = {
    id: 'msg_upstream',
    model: 'acme/chat-large',
    created: 1,
    content: [
      { type: 'text', text: 'Let me ' },
      { type: 'text', text: 'look.' },
      { type: 'tool-call', id: 'call_1', name: 'lookup', arguments: '{"q":"x"}' },
    ],
    finishReason: { unified: 'tool-calls', raw: 'tool_use' },
    usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15, cachedInputTokens: 4 },
  };

  test('the full chat.completion object', () => {
    expect(encodeChatResponse(canonical, OPTS)).toEqual({
      id: 'chatcmpl-gw123',
      object: 'chat.completion',
      created: 1741570000,
      model: 'acme/chat-large',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'Let me look.',
            refusal: null,
            tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } }],
          },
          logprobs: null,
          finish_reason: 'tool_calls',
        },
      ],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, prompt_tokens_details: { cached_tokens: 4 } },
    });
  });

  test('content is null with only tool calls, an empty string with nothing at all', () => {
    const onlyTools = encodeChatResponse({ ...canonical, content: canonical.content.slice(2) }, OPTS).choices[0]!
      .message;
    expect(onlyTools.content).toBeNull();
    const empty = encodeChatResponse({ ...canonical, content: [], finishReason: { unified: 'length' } }, OPTS)
      .choices[0]!;
    expect([empty.message.content, empty.message.tool_calls, empty.finish_reason]).toEqual(['', undefined, 'length']);
  });

  test('every canonical finish reason maps to a chat finish_reason', () => {
    const cases = [
      ['stop', 'stop'],
      ['stop-sequence', 'stop'],
      ['length', 'length'],
      ['tool-calls', 'tool_calls'],
      ['content-filter', 'content_filter'],
      ['error', 'stop'],
      ['other', 'stop'],
    ] as const;
    for (const [unified, chat] of cases) expect(toChatFinishReason({ unified })).toBe(chat);
  });

  test('usage both ways; reasoning details only when known', () => {
    const usage = { inputTokens: 20, outputTokens: 140, totalTokens: 160, reasoningTokens: 128 };
    expect(toChatUsage(usage)).toEqual({
      prompt_tokens: 20,
      completion_tokens: 140,
      total_tokens: 160,
      completion_tokens_details: { reasoning_tokens: 128 },
    });
    expect(fromChatUsage(toChatUsage(usage))).toEqual(usage);
    expect(fromChatUsage(null)).toEqual({ inputTokens: 0, outputTokens: 0, totalTokens: 0 });
  });

  test('round trip through decodeChatResponse', () => {
    const back = decodeChatResponse(encodeChatResponse(canonical, OPTS), 'acme/chat-large');
    expect(back).toEqual({
      ...canonical,
      id: 'chatcmpl-gw123',
      created: 1741570000,
      content: [{ type: 'text', text: 'Let me look.' }, canonical.content[2]!],
      finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
    });
  });

  test('openai SDK: chat.completions.create() parses the body', async () => {
    const body = encodeChatResponse(canonical, OPTS);
    const client = new OpenAI({
      apiKey: 'k',
      baseURL: 'http://gateway.test/v1',
      maxRetries: 0,
      fetch: async () => Response.json(body),
    });
    const completion = await client.chat.completions.create({
      model: 'acme/chat-large',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(completion).toEqual(body as unknown as typeof completion);
    expect(completion.choices[0]?.message.tool_calls?.[0]).toMatchObject({
      type: 'function',
      function: { name: 'lookup' },
    });
  });
});

import { describe, expect, test } from 'bun:test';
import { InvalidRequestError } from '../../translators/canonical/errors.ts';
import type { CanonicalRequest } from '../../translators/canonical/request.ts';
import { decodeChatRequest, encodeChatRequest } from '../../translators/chat-completions/index.ts';

const FIXTURES = `${import.meta.dir}/../fixtures/chat-completions`;
const fixture = async (name: string): Promise<unknown> => Bun.file(`${FIXTURES}/${name}`).json();

/** The InvalidRequestError a body raises (fails the test when none is raised). */
function rejection(body: unknown): InvalidRequestError {
  try {
    decodeChatRequest(body);
  } catch (err) {
    if (err instanceof InvalidRequestError) return err;
    throw err;
  }
  throw new Error('expected an InvalidRequestError');
}

const user = (content: unknown) => ({ model: 'm', messages: [{ role: 'user', content }] });

describe('decodeChatRequest', () => {
  test('the smallest request: defaults apply, no warnings', () => {
    const { value, warnings } = decodeChatRequest({
      model: 'sandbox/echo',
      messages: [{ role: 'user', content: 'hello' }],
    });
    expect(value).toEqual({
      request: {
        model: 'sandbox/echo',
        messages: [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }],
        stream: false,
      },
      includeUsage: false,
    });
    expect(warnings).toEqual([]);
  });

  test('a whole conversation: images, tool calls and results, every setting', async () => {
    const { value, warnings } = decodeChatRequest(await fixture('request-conversation.json'));
    const req = value.request;
    expect(req.messages).toEqual([
      { role: 'system', content: [{ type: 'text', text: 'You are a weather assistant.' }] },
      { role: 'system', content: [{ type: 'text', text: 'Answer in metric units.' }] },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is the weather where these photos were taken?' },
          { type: 'image', source: { kind: 'url', url: 'https://example.com/paris.jpg' }, detail: 'low' },
          { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo=' } },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me check both.' },
          { type: 'tool-call', id: 'call_Paris01', name: 'get_weather', arguments: '{"location":"Paris, France"}' },
          { type: 'tool-call', id: 'call_Tokyo02', name: 'get_weather', arguments: '{"location":"Tokyo, Japan"}' },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'call_Paris01', content: [{ type: 'text', text: '18°C and sunny' }] },
          {
            type: 'tool-result',
            toolCallId: 'call_Tokyo02',
            content: [
              { type: 'text', text: '24°C, ' },
              { type: 'text', text: 'humid' },
            ],
          },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'Thanks! Which is warmer?' }] },
    ]);
    expect(req.tools).toEqual([
      {
        name: 'get_weather',
        description: 'Current weather for a location',
        parameters: {
          type: 'object',
          properties: { location: { type: 'string' } },
          required: ['location'],
          additionalProperties: false,
        },
        strict: true,
      },
      { name: 'get_time', parameters: { type: 'object', properties: {} } },
    ]);
    expect(req.toolChoice).toEqual({ type: 'tool', name: 'get_weather' });
    expect(req.parallelToolCalls).toBe(false);
    expect([req.temperature, req.topP, req.maxTokens, req.user, req.stream]).toEqual([0.4, 0.9, 512, 'user-42', true]);
    expect(req.stopSequences).toEqual(['\n\nUser:', 'END']);
    expect(req.responseFormat).toEqual({
      type: 'json-schema',
      name: 'answer',
      description: 'The warmer city',
      schema: { type: 'object', properties: { city: { type: 'string' } } },
      strict: true,
    });
    expect(value.includeUsage).toBe(true);
    // frequency_penalty 0, logprobs false and n 1 are the defaults: no warning for them.
    expect(warnings.map((w) => [w.type, w.field])).toEqual([
      ['unsupported-setting', 'presence_penalty'],
      ['unsupported-setting', 'logit_bias'],
      ['unsupported-setting', 'seed'],
      ['unsupported-setting', 'messages[6].name'],
    ]);
  });

  test('max_tokens alone, a single stop string, JSON mode, tool_choice strings', () => {
    const tools = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }];
    const { value } = decodeChatRequest({
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      max_tokens: 64,
      stop: 'END',
      response_format: { type: 'json_object' },
    });
    expect(value.request).toMatchObject({ maxTokens: 64, stopSequences: ['END'], responseFormat: { type: 'json' } });
    for (const choice of ['none', 'auto', 'required'] as const) {
      expect(
        decodeChatRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], tools, tool_choice: choice }).value
          .request.toolChoice,
      ).toEqual({ type: choice });
    }
    expect(decodeChatRequest({ ...user('x'), response_format: { type: 'text' }, stop: [] }).value.request).toEqual({
      model: 'm',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }] }],
      stream: false,
      responseFormat: { type: 'text' },
    });
  });

  test('include_usage only counts on a stream; nulls read as absent', () => {
    expect(decodeChatRequest({ ...user('x'), stream_options: { include_usage: true } }).value.includeUsage).toBe(false);
    expect(decodeChatRequest({ ...user('x'), stream: true }).value.includeUsage).toBe(false);
    expect(
      decodeChatRequest({ ...user('x'), stream: true, stream_options: { include_usage: true } }).value.includeUsage,
    ).toBe(true);
    const { value } = decodeChatRequest({
      ...user('x'),
      temperature: null,
      max_tokens: null,
      stop: null,
      tools: null,
      tool_choice: null,
      response_format: null,
      n: null,
      stream_options: null,
    });
    expect(value.request).toEqual({
      model: 'm',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }] }],
      stream: false,
    });
  });

  test('assistant history: tool calls without content, refusals kept as text with a warning', () => {
    const { value, warnings } = decodeChatRequest({
      model: 'm',
      messages: [
        { role: 'user', content: 'hi' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'ok' },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'A' },
            { type: 'refusal', refusal: 'No.' },
          ],
        },
        { role: 'assistant', content: '', refusal: 'I cannot.' },
      ],
    });
    expect(value.request.messages.slice(1)).toEqual([
      { role: 'assistant', content: [{ type: 'tool-call', id: 'c1', name: 'f', arguments: '{}' }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', content: [{ type: 'text', text: 'ok' }] }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'A' },
          { type: 'text', text: 'No.' },
        ],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'I cannot.' }] },
    ]);
    expect(warnings.map((w) => w.field)).toEqual(['messages[3].content[1]', 'messages[4].refusal']);
  });

  test('an image_url given as a bare string is taken as the URL', () => {
    const { value } = decodeChatRequest(user([{ type: 'image_url', image_url: 'https://example.com/a.png' }]));
    expect(value.request.messages[0]).toEqual({
      role: 'user',
      content: [{ type: 'image', source: { kind: 'url', url: 'https://example.com/a.png' } }],
    });
  });

  const tool = (name: string) => ({ type: 'function', function: { name } });
  const invalids: Array<[string, unknown, string, string]> = [
    ['missing model', { messages: [{ role: 'user', content: 'x' }] }, 'model', 'model: is required'],
    ['empty model', { model: '', messages: [{ role: 'user', content: 'x' }] }, 'model', 'model: must not be empty'],
    ['missing messages', { model: 'm' }, 'messages', 'messages: is required'],
    [
      'messages of the wrong type',
      { model: 'm', messages: 'hi' },
      'messages',
      'messages: must be an array of messages',
    ],
    ['empty messages', { model: 'm', messages: [] }, 'messages', 'messages: must contain at least one message'],
    [
      'a message that is not an object',
      { model: 'm', messages: ['hi'] },
      'messages[0]',
      'messages[0]: must be a message object',
    ],
    [
      'bad role',
      { model: 'm', messages: [{ role: 'robot', content: 'x' }] },
      'messages[0].role',
      'messages[0].role: must be one of system, developer, user, assistant, tool',
    ],
    [
      'deprecated function role',
      { model: 'm', messages: [{ role: 'function', name: 'f', content: 'x' }] },
      'messages[0].role',
      'messages[0].role: function messages are deprecated and not supported; use tool messages',
    ],
    [
      'user without content',
      { model: 'm', messages: [{ role: 'user' }] },
      'messages[0].content',
      'messages[0].content: is required',
    ],
    [
      'content of the wrong type',
      user(5),
      'messages[0].content',
      'messages[0].content: must be a string or an array of content parts',
    ],
    [
      'a part that is not an object',
      user(['x']),
      'messages[0].content[0]',
      'messages[0].content[0]: must be a content part object',
    ],
    [
      'a part without type',
      user([{ text: 'x' }]),
      'messages[0].content[0].type',
      'messages[0].content[0].type: is required',
    ],
    [
      'a text part without text',
      user([{ type: 'text' }]),
      'messages[0].content[0].text',
      'messages[0].content[0].text: is required',
    ],
    [
      'an unknown part type',
      user([{ type: 'video_url' }]),
      'messages[0].content[0].type',
      'messages[0].content[0].type: unsupported content part type "video_url" in a user message (use text or image_url)',
    ],
    [
      'an audio part',
      user([{ type: 'input_audio', input_audio: { data: 'x', format: 'wav' } }]),
      'messages[0].content[0].type',
      'messages[0].content[0].type: input_audio content is not supported',
    ],
    [
      'an image part without image_url',
      user([{ type: 'text', text: 'x' }, { type: 'image_url' }]),
      'messages[0].content[1].image_url',
      'messages[0].content[1].image_url: is required',
    ],
    [
      'an image without url',
      user([
        { type: 'text', text: 'x' },
        { type: 'image_url', image_url: { detail: 'low' } },
      ]),
      'messages[0].content[1].image_url.url',
      'messages[0].content[1].image_url.url: is required',
    ],
    [
      'an image URL that is neither http(s) nor data:',
      user([
        { type: 'text', text: 'x' },
        { type: 'image_url', image_url: { url: 'ftp://x/y.png' } },
      ]),
      'messages[0].content[1].image_url',
      'messages[0].content[1].image_url: must be an http(s) URL or a data: URI',
    ],
    [
      'a data URI without base64',
      user([{ type: 'image_url', image_url: { url: 'data:image/png,abc' } }]),
      'messages[0].content[0].image_url',
      'messages[0].content[0].image_url: must be a base64 data: URI (data:<media type>;base64,<data>)',
    ],
    [
      'a bad image detail',
      user([{ type: 'image_url', image_url: { url: 'https://x/y.png', detail: 'max' } }]),
      'messages[0].content[0].image_url.detail',
      'messages[0].content[0].image_url.detail: must be one of auto, low, high',
    ],
    [
      'an image in a system message',
      {
        model: 'm',
        messages: [{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] }],
      },
      'messages[0].content[0].type',
      'messages[0].content[0].type: system messages take text parts only, not "image_url"',
    ],
    [
      'an assistant with neither content nor tool_calls',
      { model: 'm', messages: [{ role: 'assistant' }] },
      'messages[0].content',
      'messages[0].content: is required unless tool_calls is set',
    ],
    [
      'a tool call without id',
      {
        model: 'm',
        messages: [{ role: 'assistant', tool_calls: [{ type: 'function', function: { name: 'f', arguments: '{}' } }] }],
      },
      'messages[0].tool_calls[0].id',
      'messages[0].tool_calls[0].id: is required',
    ],
    [
      'a tool call without arguments',
      {
        model: 'm',
        messages: [{ role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f' } }] }],
      },
      'messages[0].tool_calls[0].function.arguments',
      'messages[0].tool_calls[0].function.arguments: is required',
    ],
    [
      'a custom tool call',
      {
        model: 'm',
        messages: [{ role: 'assistant', tool_calls: [{ id: 'c', type: 'custom', custom: { name: 'f', input: 'x' } }] }],
      },
      'messages[0].tool_calls[0].type',
      'messages[0].tool_calls[0].type: only function tool calls are supported',
    ],
    [
      'a legacy function_call in history',
      { model: 'm', messages: [{ role: 'assistant', content: 'x', function_call: { name: 'f', arguments: '{}' } }] },
      'messages[0].function_call',
      'messages[0].function_call: function_call is deprecated and not supported; use tool_calls',
    ],
    [
      'a tool message without tool_call_id',
      { model: 'm', messages: [{ role: 'tool', content: 'x' }] },
      'messages[0].tool_call_id',
      'messages[0].tool_call_id: is required',
    ],
    ['stream not boolean', { ...user('x'), stream: 'yes' }, 'stream', 'stream: must be a boolean'],
    ['temperature above 2', { ...user('x'), temperature: 2.5 }, 'temperature', 'temperature: must be between 0 and 2'],
    ['negative temperature', { ...user('x'), temperature: -1 }, 'temperature', 'temperature: must be between 0 and 2'],
    ['top_p above 1', { ...user('x'), top_p: 1.5 }, 'top_p', 'top_p: must be between 0 and 1'],
    ['fractional max_tokens', { ...user('x'), max_tokens: 10.5 }, 'max_tokens', 'max_tokens: must be an integer'],
    ['zero max_tokens', { ...user('x'), max_tokens: 0 }, 'max_tokens', 'max_tokens: must be at least 1'],
    [
      'zero max_completion_tokens',
      { ...user('x'), max_completion_tokens: 0 },
      'max_completion_tokens',
      'max_completion_tokens: must be at least 1',
    ],
    [
      'five stop sequences',
      { ...user('x'), stop: ['a', 'b', 'c', 'd', 'e'] },
      'stop',
      'stop: must have at most 4 sequences',
    ],
    ['stop of the wrong type', { ...user('x'), stop: 5 }, 'stop', 'stop: must be a string or an array of strings'],
    ['n above 1', { ...user('x'), n: 2 }, 'n', 'n: only one choice per request is supported; n must be 1'],
    ['tools not an array', { ...user('x'), tools: {} }, 'tools', 'tools: must be an array'],
    [
      'a custom tool',
      { ...user('x'), tools: [{ type: 'custom', custom: { name: 'x' } }] },
      'tools[0].type',
      'tools[0].type: tool type "custom" is not supported; only function tools are',
    ],
    [
      'a tool without function',
      { ...user('x'), tools: [{ type: 'function' }] },
      'tools[0].function',
      'tools[0].function: is required',
    ],
    [
      'a tool without a name',
      { ...user('x'), tools: [{ type: 'function', function: { parameters: {} } }] },
      'tools[0].function.name',
      'tools[0].function.name: is required',
    ],
    [
      'a tool with a bad name',
      { ...user('x'), tools: [tool('get weather')] },
      'tools[0].function.name',
      'tools[0].function.name: must be 1 to 64 letters, digits, underscores or dashes',
    ],
    [
      'tool parameters that are not an object',
      { ...user('x'), tools: [{ type: 'function', function: { name: 'f', parameters: 'x' } }] },
      'tools[0].function.parameters',
      'tools[0].function.parameters: must be a JSON Schema object',
    ],
    [
      'duplicate tool names',
      { ...user('x'), tools: [tool('f'), tool('f')] },
      'tools[1].function.name',
      'tools[1].function.name: duplicate tool name "f"',
    ],
    [
      'an unknown tool_choice string',
      { ...user('x'), tools: [tool('f')], tool_choice: 'any' },
      'tool_choice',
      'tool_choice: must be "none", "auto", "required" or {"type": "function", "function": {"name": …}}',
    ],
    [
      'tool_choice required without tools',
      { ...user('x'), tool_choice: 'required' },
      'tool_choice',
      'tool_choice: "required" needs at least one tool in tools',
    ],
    [
      'tool_choice naming an unknown tool',
      { ...user('x'), tools: [tool('a')], tool_choice: { type: 'function', function: { name: 'b' } } },
      'tool_choice.function.name',
      'tool_choice.function.name: names the function "b", which is not among the tools',
    ],
    [
      'tool_choice without a name',
      { ...user('x'), tools: [tool('a')], tool_choice: { type: 'function', function: {} } },
      'tool_choice.function.name',
      'tool_choice.function.name: is required',
    ],
    [
      'tool_choice allowed_tools',
      {
        ...user('x'),
        tools: [tool('a')],
        tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [] } },
      },
      'tool_choice.type',
      'tool_choice.type: tool choice type "allowed_tools" is not supported; use "function"',
    ],
    [
      'parallel_tool_calls not boolean',
      { ...user('x'), parallel_tool_calls: 'no' },
      'parallel_tool_calls',
      'parallel_tool_calls: must be a boolean',
    ],
    [
      'response_format not an object',
      { ...user('x'), response_format: 'json' },
      'response_format',
      'response_format: must be an object',
    ],
    [
      'an unknown response_format',
      { ...user('x'), response_format: { type: 'yaml' } },
      'response_format.type',
      'response_format.type: must be one of text, json_object, json_schema',
    ],
    [
      'json_schema without json_schema',
      { ...user('x'), response_format: { type: 'json_schema' } },
      'response_format.json_schema',
      'response_format.json_schema: is required',
    ],
    [
      'json_schema without schema',
      { ...user('x'), response_format: { type: 'json_schema', json_schema: { name: 'a' } } },
      'response_format.json_schema.schema',
      'response_format.json_schema.schema: is required',
    ],
    [
      'json_schema without name',
      { ...user('x'), response_format: { type: 'json_schema', json_schema: { schema: {} } } },
      'response_format.json_schema.name',
      'response_format.json_schema.name: is required',
    ],
    ['user not a string', { ...user('x'), user: 42 }, 'user', 'user: must be a string'],
    [
      'stream_options not an object',
      { ...user('x'), stream: true, stream_options: true },
      'stream_options',
      'stream_options: must be an object',
    ],
    [
      'include_usage not boolean',
      { ...user('x'), stream: true, stream_options: { include_usage: 'yes' } },
      'stream_options.include_usage',
      'stream_options.include_usage: must be a boolean',
    ],
    [
      'audio output',
      { ...user('x'), audio: { voice: 'alloy', format: 'wav' } },
      'audio',
      'audio: audio output is not supported',
    ],
    [
      'audio modality',
      { ...user('x'), modalities: ['text', 'audio'] },
      'modalities',
      'modalities: only text output is supported',
    ],
    [
      'legacy functions',
      { ...user('x'), functions: [{ name: 'f' }] },
      'functions',
      'functions: functions are deprecated and not supported; use tools',
    ],
  ];
  for (const [name, body, param, message] of invalids) {
    test(`rejects ${name}, naming ${param}`, () => {
      const err = rejection(body);
      expect({ param: err.param, message: err.message }).toEqual({ param, message });
    });
  }

  test('a body that is not an object', () => {
    const err = rejection([1, 2]);
    expect(err.param).toBeUndefined();
    expect(err.message).toStartWith('request body:');
  });
});

describe('encodeChatRequest', () => {
  test("the output cap is max_completion_tokens for OpenAI's reasoning models, max_tokens for every other", () => {
    const request: CanonicalRequest = {
      model: 'm',
      stream: false,
      maxTokens: 1024,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
    };
    for (const model of ['o1', 'o3-mini', 'o4-mini-2025-04-16', 'gpt-5', 'gpt-5-mini', 'openai/gpt-5.1']) {
      const { value } = encodeChatRequest(request, model);
      expect(value.max_completion_tokens).toBe(1024);
      expect(value.max_tokens).toBeUndefined();
    }
    for (const model of ['gpt-4.1', 'gpt-4o-mini', 'gpt-5-chat-latest', 'olmo-2-13b', 'llama-3.1-8b', 'up-text']) {
      const { value } = encodeChatRequest(request, model);
      expect(value.max_tokens).toBe(1024);
      expect(value.max_completion_tokens).toBeUndefined();
    }
  });

  const base: CanonicalRequest = {
    model: 'acme/chat-large',
    stream: true,
    messages: [
      { role: 'system', content: [{ type: 'text', text: 'Be terse.' }] },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Weather?' },
          { type: 'image', source: { kind: 'base64', mediaType: 'image/jpeg', data: '/9j/4AAQ' }, detail: 'high' },
          { type: 'image', source: { kind: 'url', url: 'https://example.com/a.png' } },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'tool-call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
          { type: 'tool-call', id: 'call_2', name: 'get_weather', arguments: '{"city":"Oslo"}' },
        ],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'call_1',
            content: [
              { type: 'text', text: '18' },
              { type: 'text', text: 'C' },
            ],
          },
          {
            type: 'tool-result',
            toolCallId: 'call_2',
            content: [
              { type: 'text', text: 'radar:' },
              { type: 'image', source: { kind: 'url', url: 'https://x/r.png' } },
            ],
            isError: true,
          },
        ],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'Paris is warmer.' }] },
      { role: 'system', content: [{ type: 'text', text: 'Late note.' }] },
      { role: 'user', content: [{ type: 'text', text: 'Thanks' }] },
    ],
    tools: [{ name: 'get_weather', description: 'Weather', parameters: { type: 'object' }, strict: true }],
    toolChoice: { type: 'tool', name: 'get_weather' },
    parallelToolCalls: false,
    temperature: 0.2,
    topP: 0.5,
    maxTokens: 8,
    stopSequences: ['END', '\n\n', 'STOP', 'Q:', 'A:'],
    responseFormat: { type: 'json-schema', name: 'w', schema: { type: 'object' }, strict: true },
    user: 'u1',
  };

  test('builds the upstream body: messages in place, one tool message per result, every setting', () => {
    const { value, warnings } = encodeChatRequest(base, 'chat-large');
    expect(value).toEqual({
      model: 'chat-large',
      messages: [
        { role: 'system', content: 'Be terse.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Weather?' },
            { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQ', detail: 'high' } },
            { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
          ],
        },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '18C' },
        { role: 'tool', tool_call_id: 'call_2', content: 'radar:' },
        { role: 'assistant', content: 'Paris is warmer.' },
        { role: 'system', content: 'Late note.' },
        { role: 'user', content: 'Thanks' },
      ],
      stream: true,
      stream_options: { include_usage: true },
      temperature: 0.2,
      top_p: 0.5,
      max_tokens: 8,
      stop: ['END', '\n\n', 'STOP', 'Q:'],
      tools: [
        {
          type: 'function',
          function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object' }, strict: true },
        },
      ],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      parallel_tool_calls: false,
      response_format: { type: 'json_schema', json_schema: { name: 'w', schema: { type: 'object' }, strict: true } },
      user: 'u1',
    });
    expect(warnings.map((w) => [w.type, w.field])).toEqual([
      ['unsupported-content', 'messages[3].content[1]'],
      ['unsupported-content', 'messages[3].content[1]'],
      ['changed-value', 'stop'],
    ]);
  });

  test('stop sequences are sent, never silently dropped', () => {
    const { value, warnings } = encodeChatRequest(
      {
        model: 'g',
        stream: false,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }] }],
        stopSequences: ['\n'],
      },
      'u',
    );
    expect(value.stop).toEqual(['\n']);
    expect(warnings).toEqual([]);
  });

  test('include_usage is always asked for on a stream, never on a plain call', () => {
    const request: CanonicalRequest = {
      model: 'g',
      stream: true,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }] }],
    };
    expect(encodeChatRequest(request, 'u').value).toEqual({
      model: 'u',
      messages: [{ role: 'user', content: 'x' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(encodeChatRequest({ ...request, stream: false }, 'u').value).toEqual({
      model: 'u',
      messages: [{ role: 'user', content: 'x' }],
      stream: false,
    });
  });

  test('JSON mode, tool choice strings, and tool_choice without tools', () => {
    const request: CanonicalRequest = {
      model: 'g',
      stream: false,
      messages: [{ role: 'user', content: [] }],
      responseFormat: { type: 'json' },
      toolChoice: { type: 'required' },
      parallelToolCalls: true,
    };
    const { value, warnings } = encodeChatRequest(request, 'u');
    expect(value).toEqual({
      model: 'u',
      messages: [{ role: 'user', content: '' }],
      stream: false,
      response_format: { type: 'json_object' },
    });
    expect(warnings.map((w) => w.field)).toEqual(['tool_choice']);
    const withTools = encodeChatRequest(
      { ...request, tools: [{ name: 'f', parameters: {} }], toolChoice: { type: 'none' } },
      'u',
    ).value;
    expect([withTools.tool_choice, withTools.parallel_tool_calls]).toEqual(['none', true]);
  });

  test('round trip: decode(encode(request)) keeps messages and settings', () => {
    const request: CanonicalRequest = {
      ...base,
      stopSequences: ['END'],
      messages: base.messages.filter((m) => m.role !== 'tool').slice(0, 3),
    };
    const wire = encodeChatRequest(request, 'acme/chat-large').value;
    const back = decodeChatRequest(wire).value;
    expect(back.request).toEqual(request);
    expect(back.includeUsage).toBe(true);
  });
});

import { describe, expect, test } from 'bun:test';
import { InvalidRequestError } from '../../translators/canonical/errors.ts';
import type { CanonicalRequest } from '../../translators/canonical/request.ts';
import { decodeResponsesRequest, encodeResponsesRequest } from '../../translators/responses/index.ts';

const FIXTURES = `${import.meta.dir}/../fixtures/responses`;
const fixture = async (name: string): Promise<unknown> => Bun.file(`${FIXTURES}/${name}`).json();

/** The InvalidRequestError a body raises (fails the test when none is raised). */
function rejection(body: unknown): InvalidRequestError {
  try {
    decodeResponsesRequest(body);
  } catch (err) {
    if (err instanceof InvalidRequestError) return err;
    throw err;
  }
  throw new Error('expected an InvalidRequestError');
}

describe('decodeResponsesRequest', () => {
  test('string input with instructions: a system message leads, defaults apply', () => {
    const { value, warnings } = decodeResponsesRequest({
      model: 'sandbox/echo',
      input: 'hello',
      instructions: 'be kind',
    });
    expect(value.request).toEqual({
      model: 'sandbox/echo',
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'be kind' }] },
        { role: 'user', content: [{ type: 'text', text: 'hello' }] },
      ],
      stream: false,
    });
    expect(value.store).toBe(true);
    expect(value.instructions).toBe('be kind');
    expect(value.previousResponseId).toBeUndefined();
    expect(value.echo).toMatchObject({
      instructions: 'be kind',
      store: true,
      toolChoice: 'auto',
      tools: [],
      temperature: 1,
      topP: 1,
      parallelToolCalls: true,
      textFormat: { type: 'text' },
      metadata: {},
    });
    expect(warnings).toEqual([]);
  });

  test('a whole conversation: images, tool calls and results, settings, echo', async () => {
    const { value, warnings } = decodeResponsesRequest(await fixture('request-conversation.json'));
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
              { type: 'text', text: 'radar:' },
              { type: 'image', source: { kind: 'url', url: 'https://example.com/radar.png' } },
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
    ]);
    expect(req.toolChoice).toEqual({ type: 'tool', name: 'get_weather' });
    expect(req.parallelToolCalls).toBe(false);
    expect(req.temperature).toBe(0.4);
    expect(req.topP).toBe(0.9);
    expect(req.maxTokens).toBe(512);
    expect(req.stream).toBe(true);
    expect(req.user).toBe('user-42');
    expect(req.responseFormat).toEqual({
      type: 'json-schema',
      name: 'answer',
      schema: { type: 'object', properties: { city: { type: 'string' } } },
      strict: true,
    });
    expect(value.previousResponseId).toBe('resp_previous123');
    expect(value.store).toBe(false);
    expect(value.metadata).toEqual({ session: 'abc' });
    expect(value.echo).toMatchObject({
      previousResponseId: 'resp_previous123',
      store: false,
      toolChoice: { type: 'function', name: 'get_weather' },
      parallelToolCalls: false,
      maxOutputTokens: 512,
      textFormat: { type: 'json_schema', name: 'answer', strict: true },
      tools: [{ type: 'function', name: 'get_weather', description: 'Current weather for a location', strict: true }],
      user: 'user-42',
    });
    expect(warnings).toEqual([
      { type: 'unsupported-content', field: 'input[7]', message: 'an empty reasoning item was left out' },
    ]);
  });

  test('tool_choice variants and JSON mode', () => {
    const tools = [{ type: 'function', name: 'lookup', parameters: null, strict: false }];
    for (const choice of ['none', 'auto', 'required'] as const) {
      const { value } = decodeResponsesRequest({ model: 'm', input: 'x', tools, tool_choice: choice });
      expect(value.request.toolChoice).toEqual({ type: choice });
      expect(value.echo.toolChoice).toBe(choice);
    }
    const { value } = decodeResponsesRequest({
      model: 'm',
      input: 'x',
      tools,
      text: { format: { type: 'json_object' } },
    });
    expect(value.request.tools).toEqual([
      { name: 'lookup', parameters: { type: 'object', properties: {} }, strict: false },
    ]);
    expect(value.request.responseFormat).toEqual({ type: 'json' });
    expect(value.echo.textFormat).toEqual({ type: 'json_object' });
  });

  test('assistant history as an EasyInputMessage string and refusals; nulls are accepted as absent', () => {
    const { value, warnings } = decodeResponsesRequest({
      model: 'm',
      input: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'hello' },
        { role: 'assistant', content: [{ type: 'refusal', refusal: 'I cannot.' }] },
      ],
      temperature: null,
      instructions: null,
      tools: null,
      store: null,
    });
    expect(value.request.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'hello' },
          { type: 'text', text: 'I cannot.' },
        ],
      },
    ]);
    expect(value.request.temperature).toBeUndefined();
    expect(value.store).toBe(true);
    expect(warnings.map((w) => w.field)).toEqual(['input[2].content[0]']);
  });

  test('reasoning.effort becomes canonical reasoning; none turns it off; a bad effort names the field', () => {
    expect(
      decodeResponsesRequest({ model: 'm', input: 'x', reasoning: { effort: 'high' } }).value.request.reasoning,
    ).toEqual({ enabled: true, effort: 'high' });
    expect(
      decodeResponsesRequest({ model: 'm', input: 'x', reasoning: { effort: 'none' } }).value.request.reasoning,
    ).toEqual({ enabled: false });
    expect(() => decodeResponsesRequest({ model: 'm', input: 'x', reasoning: { effort: 'huge' } })).toThrow(
      'reasoning.effort: must be one of',
    );
  });

  test('reasoning input items: text and the gateway-issued encrypted content come back as reasoning parts', () => {
    const { value, warnings } = decodeResponsesRequest({
      model: 'm',
      input: [
        { role: 'user', content: 'q' },
        {
          type: 'reasoning',
          id: 'rs_1',
          summary: [],
          content: [{ type: 'reasoning_text', text: 'thinking' }],
          encrypted_content: 'sig:EqQBsig==',
        },
        { type: 'reasoning', id: 'rs_2', summary: [], encrypted_content: 'redacted:ENCRYPTED' },
        { type: 'reasoning', id: 'rs_3', summary: [{ type: 'summary_text', text: 's' }], encrypted_content: 'gAAAA' },
      ],
    });
    expect(value.request.messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'thinking', signature: 'EqQBsig==' },
        { type: 'reasoning', text: '', redacted: 'ENCRYPTED' },
        { type: 'reasoning', text: 's' },
      ],
    });
    expect(warnings.map((w) => w.field)).toEqual(['input[3].encrypted_content']);
  });

  test('settings it cannot carry become warnings', () => {
    const { warnings } = decodeResponsesRequest({
      model: 'm',
      input: 'x',
      reasoning: { effort: 'low', summary: 'auto' },
      truncation: 'auto',
      text: { verbosity: 'low' },
    });
    expect(warnings.map((w) => [w.type, w.field])).toEqual([
      ['unsupported-setting', 'truncation'],
      ['unsupported-setting', 'text.verbosity'],
      ['unsupported-setting', 'reasoning.summary'],
    ]);
  });

  const invalids: Array<[string, unknown, string, string]> = [
    ['missing model', { input: 'x' }, 'model', 'model: is required'],
    ['missing input', { model: 'm' }, 'input', 'input: is required'],
    [
      'input of the wrong type',
      { model: 'm', input: 5 },
      'input',
      'input: must be a string or an array of input items',
    ],
    ['empty input array', { model: 'm', input: [] }, 'input', 'input: must contain at least one item'],
    [
      'temperature above 2',
      { model: 'm', input: 'x', temperature: 3 },
      'temperature',
      'temperature: must be between 0 and 2',
    ],
    ['top_p above 1', { model: 'm', input: 'x', top_p: 1.5 }, 'top_p', 'top_p: must be between 0 and 1'],
    [
      'fractional max_output_tokens',
      { model: 'm', input: 'x', max_output_tokens: 10.5 },
      'max_output_tokens',
      'max_output_tokens: must be an integer',
    ],
    [
      'zero max_output_tokens',
      { model: 'm', input: 'x', max_output_tokens: 0 },
      'max_output_tokens',
      'max_output_tokens: must be at least 1',
    ],
    ['store not boolean', { model: 'm', input: 'x', store: 'yes' }, 'store', 'store: must be a boolean'],
    [
      'bad role',
      { model: 'm', input: [{ role: 'robot', content: 'x' }] },
      'input[0].role',
      'input[0].role: must be one of user, assistant, system, developer',
    ],
    [
      'image URL that is neither http(s) nor data:',
      {
        model: 'm',
        input: [
          {
            role: 'user',
            content: [
              { type: 'input_text', text: 'x' },
              { type: 'input_image', image_url: 'ftp://x/y.png' },
            ],
          },
        ],
      },
      'input[0].content[1].image_url',
      'input[0].content[1].image_url: must be an http(s) URL or a data: URI',
    ],
    [
      'data URI without base64',
      { model: 'm', input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'data:image/png,abc' }] }] },
      'input[0].content[0].image_url',
      'input[0].content[0].image_url: must be a base64 data: URI (data:<media type>;base64,<data>)',
    ],
    [
      'image by file id',
      {
        model: 'm',
        input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file-123', detail: 'auto' }] }],
      },
      'input[0].content[0].file_id',
      'input[0].content[0].file_id: file ids are not supported; send the image as image_url (a URL or a data: URI)',
    ],
    [
      'input_file',
      { model: 'm', input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'f' }] }] },
      'input[0].content[0].type',
      'input[0].content[0].type: input_file content is not supported',
    ],
    [
      'function call without call_id',
      { model: 'm', input: [{ type: 'function_call', name: 'f', arguments: '{}' }] },
      'input[0].call_id',
      'input[0].call_id: is required',
    ],
    [
      'unresolved item reference',
      { model: 'm', input: [{ type: 'item_reference', id: 'msg_gone' }] },
      'input[0].id',
      "input[0].id: the item reference 'msg_gone' could not be resolved: no stored response has an item with this id",
    ],
    [
      'item reference without a type',
      { model: 'm', input: [{ id: 'fc_gone' }] },
      'input[0].id',
      "input[0].id: the item reference 'fc_gone' could not be resolved: no stored response has an item with this id",
    ],
    [
      'built-in tool',
      { model: 'm', input: 'x', tools: [{ type: 'web_search' }] },
      'tools[0].type',
      'tools[0].type: tool type "web_search" is not supported; only function tools are',
    ],
    [
      'tool without a name',
      { model: 'm', input: 'x', tools: [{ type: 'function', parameters: {}, strict: true }] },
      'tools[0].name',
      'tools[0].name: is required',
    ],
    [
      'tool_choice string',
      { model: 'm', input: 'x', tool_choice: 'any' },
      'tool_choice',
      'tool_choice: must be "none", "auto", "required" or {"type": "function", "name": …}',
    ],
    [
      'tool_choice naming an unknown tool',
      {
        model: 'm',
        input: 'x',
        tools: [{ type: 'function', name: 'a', parameters: {}, strict: true }],
        tool_choice: { type: 'function', name: 'b' },
      },
      'tool_choice.name',
      'tool_choice.name: names the function "b", which is not among the tools',
    ],
    [
      'built-in tool_choice',
      { model: 'm', input: 'x', tool_choice: { type: 'web_search_preview' } },
      'tool_choice.type',
      'tool_choice.type: tool choice type "web_search_preview" is not supported; use "function"',
    ],
    [
      'unknown text format',
      { model: 'm', input: 'x', text: { format: { type: 'yaml' } } },
      'text.format.type',
      'text.format.type: must be one of text, json_object, json_schema',
    ],
    [
      'json_schema without schema',
      { model: 'm', input: 'x', text: { format: { type: 'json_schema', name: 'a' } } },
      'text.format.schema',
      'text.format.schema: is required',
    ],
    [
      'metadata with a non-string value',
      { model: 'm', input: 'x', metadata: { a: 1 } },
      'metadata.a',
      'metadata.a: values must be strings',
    ],
    [
      'unknown input item',
      { model: 'm', input: [{ type: 'computer_call_output', call_id: 'c' }] },
      'input[0].type',
      'input[0].type: unsupported input item type "computer_call_output"',
    ],
    [
      'conversation',
      { model: 'm', input: 'x', conversation: 'conv_1' },
      'conversation',
      'conversation: conversations are not supported; continue with previous_response_id',
    ],
  ];
  for (const [name, body, param, message] of invalids) {
    test(`rejects ${name}, naming ${param}`, () => {
      const err = rejection(body);
      expect(err.param).toBe(param);
      expect(err.message).toBe(message);
    });
  }

  test('a body that is not an object', () => {
    const err = rejection([1, 2]);
    expect(err.param).toBeUndefined();
    expect(err.message).toStartWith('request body:');
  });
});

describe('encodeResponsesRequest', () => {
  const base: CanonicalRequest = {
    model: 'acme/chat-large',
    stream: true,
    messages: [
      { role: 'system', content: [{ type: 'text', text: 'Be terse.' }] },
      { role: 'system', content: [{ type: 'text', text: 'Use metric.' }] },
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
          { type: 'text', text: 'Checking.' },
          { type: 'tool-call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'call_1', content: [{ type: 'text', text: '18C' }], isError: true },
        ],
      },
      { role: 'system', content: [{ type: 'text', text: 'Late note.' }] },
    ],
    tools: [{ name: 'get_weather', parameters: { type: 'object' } }],
    toolChoice: { type: 'tool', name: 'get_weather' },
    parallelToolCalls: true,
    temperature: 0.2,
    topP: 0.5,
    maxTokens: 8,
    stopSequences: ['END'],
    responseFormat: { type: 'json-schema', name: 'w', schema: { type: 'object' }, strict: true },
    user: 'u1',
  };

  test('builds the upstream body with instructions, items and settings', () => {
    const { value, warnings } = encodeResponsesRequest(base, 'chat-large');
    expect(value).toEqual({
      model: 'chat-large',
      instructions: 'Be terse.\n\nUse metric.',
      input: [
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: 'Weather?' },
            { type: 'input_image', image_url: 'data:image/jpeg;base64,/9j/4AAQ', detail: 'high' },
            { type: 'input_image', image_url: 'https://example.com/a.png', detail: 'auto' },
          ],
        },
        { type: 'message', role: 'assistant', content: 'Checking.' },
        { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call_output', call_id: 'call_1', output: '18C' },
        { type: 'message', role: 'system', content: [{ type: 'input_text', text: 'Late note.' }] },
      ],
      stream: true,
      store: false,
      temperature: 0.2,
      top_p: 0.5,
      max_output_tokens: 16,
      tools: [
        { type: 'function', name: 'get_weather', description: null, parameters: { type: 'object' }, strict: false },
      ],
      tool_choice: { type: 'function', name: 'get_weather' },
      parallel_tool_calls: true,
      text: { format: { type: 'json_schema', name: 'w', schema: { type: 'object' }, strict: true } },
      user: 'u1',
    });
    expect(warnings.map((w) => w.field)).toEqual(['messages[4]', 'max_output_tokens', 'stop']);
  });

  test('round trip: decode(encode(request)) keeps messages and settings', () => {
    const { stopSequences: _stop, ...rest } = base;
    const request: CanonicalRequest = { ...rest, maxTokens: 64, messages: base.messages.slice(0, 4) };
    const wire = encodeResponsesRequest(request, 'acme/chat-large').value;
    const back = decodeResponsesRequest(wire).value.request;
    expect(back.messages).toEqual([
      { role: 'system', content: [{ type: 'text', text: 'Be terse.\n\nUse metric.' }] },
      ...request.messages
        .slice(2)
        .map((m) =>
          m.role === 'user'
            ? { ...m, content: m.content.map((p) => (p.type === 'image' ? { ...p, detail: p.detail ?? 'auto' } : p)) }
            : m,
        ),
    ]);
    expect(back.tools).toEqual([{ name: 'get_weather', parameters: { type: 'object' }, strict: false }]);
    expect(back.toolChoice).toEqual(request.toolChoice);
    expect(back.responseFormat).toEqual(request.responseFormat);
    expect([back.temperature, back.topP, back.maxTokens, back.user, back.stream]).toEqual([0.2, 0.5, 64, 'u1', true]);
  });
});

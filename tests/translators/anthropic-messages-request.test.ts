import { describe, expect, test } from 'bun:test';
import {
  decodeAnthropicRequest,
  DEFAULT_MAX_TOKENS,
  encodeAnthropicRequest,
  JSON_MODE_INSTRUCTION,
} from '../../translators/anthropic-messages/index.ts';
import { InvalidRequestError } from '../../translators/canonical/errors.ts';
import type { CanonicalRequest } from '../../translators/canonical/request.ts';

const FIXTURES = `${import.meta.dir}/../fixtures/anthropic-messages`;
const base = { model: 'anthropic/claude-sonnet', max_tokens: 256, messages: [{ role: 'user', content: 'Hello' }] };

function rejects(body: unknown): InvalidRequestError {
  try {
    decodeAnthropicRequest(body);
  } catch (err) {
    if (err instanceof InvalidRequestError) return err;
    throw err;
  }
  throw new Error('expected an InvalidRequestError');
}

describe('decodeAnthropicRequest', () => {
  test('a minimal request', () => {
    const { value, warnings } = decodeAnthropicRequest(base);
    expect(value).toEqual({
      model: 'anthropic/claude-sonnet',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }],
      stream: false,
      maxTokens: 256,
    });
    expect(warnings).toEqual([]);
  });

  test('the recorded conversation: system blocks, images, thinking, tool use, tool results split before user text', async () => {
    const body: unknown = await Bun.file(`${FIXTURES}/request-conversation.json`).json();
    const { value, warnings } = decodeAnthropicRequest(body);
    expect(value.messages).toEqual([
      {
        role: 'system',
        content: [
          { type: 'text', text: 'You are a weather assistant.', cacheControl: { type: 'ephemeral' } },
          { type: 'text', text: 'Answer briefly.' },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in this picture, and what is the weather in Paris?' },
          { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgoAAAANSUhEUg==' } },
          { type: 'image', source: { kind: 'url', url: 'https://example.com/cat.jpg' } },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'The user wants two things.', signature: 'sig' },
          { type: 'text', text: 'A cat. Let me check Paris.' },
          { type: 'tool-call', id: 'toolu_01A', name: 'get_weather', arguments: '{"city":"Paris","unit":"c"}' },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'toolu_01A', content: [{ type: 'text', text: '18°C, cloudy' }] },
          { type: 'tool-result', toolCallId: 'toolu_01B', content: [{ type: 'text', text: 'timeout' }], isError: true },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'Also convert to Fahrenheit.' }] },
    ]);
    expect(value.tools).toEqual([
      {
        name: 'get_weather',
        description: 'Current weather for a city',
        parameters: {
          type: 'object',
          properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['c', 'f'] } },
          required: ['city'],
        },
        cacheControl: { type: 'ephemeral' },
      },
    ]);
    expect(value.toolChoice).toEqual({ type: 'required' });
    expect(value.parallelToolCalls).toBe(false);
    expect(value.temperature).toBe(0.3);
    expect(value.stopSequences).toEqual(['###', 'END']);
    expect(value.stream).toBe(true);
    expect(value.user).toBe('user-42');
    expect(value.maxTokens).toBe(1024);
    expect(warnings).toEqual([
      { type: 'unsupported-setting', field: 'top_k', message: 'top_k is not supported and was ignored' },
    ]);
  });

  test('tool_choice variants', () => {
    const tools = [{ name: 'f', input_schema: { type: 'object' } }];
    const choice = (tool_choice: unknown) => decodeAnthropicRequest({ ...base, tools, tool_choice }).value;
    expect(choice({ type: 'auto' }).toolChoice).toEqual({ type: 'auto' });
    expect(choice({ type: 'auto' }).parallelToolCalls).toBeUndefined();
    expect(choice({ type: 'none' }).toolChoice).toEqual({ type: 'none' });
    expect(choice({ type: 'any' }).toolChoice).toEqual({ type: 'required' });
    expect(choice({ type: 'tool', name: 'f', disable_parallel_tool_use: true })).toMatchObject({
      toolChoice: { type: 'tool', name: 'f' },
      parallelToolCalls: false,
    });
    expect(rejects({ ...base, tools, tool_choice: { type: 'tool', name: 'g' } }).param).toBe('tool_choice.name');
    expect(rejects({ ...base, tools, tool_choice: { type: 'tool' } }).message).toBe(
      'tool_choice.name: is required when type is tool',
    );
    expect(rejects({ ...base, tools, tool_choice: { type: 'required' } }).message).toBe(
      'tool_choice.type: must be one of auto, any, tool, none',
    );
  });

  test('structured output (output_config.format) becomes a json-schema response format', () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };
    const { value, warnings } = decodeAnthropicRequest({
      ...base,
      output_config: { format: { type: 'json_schema', schema } },
    });
    // Translated, the schema is asked for, not constrained: the client is told.
    expect(warnings).toContainEqual(expect.objectContaining({ type: 'changed-value', field: 'output_config.format' }));
    expect(value.responseFormat).toEqual({ type: 'json-schema', name: 'response', schema });
    expect(rejects({ ...base, output_config: { format: { type: 'json_object' } } }).param).toBe(
      'output_config.format.type',
    );
  });

  test('role system inside messages (newer SDKs) and thinking are carried', () => {
    const { value, warnings } = decodeAnthropicRequest({
      ...base,
      messages: [{ role: 'system', content: 'Be terse.' }, ...base.messages],
      thinking: { type: 'enabled', budget_tokens: 1024 },
    });
    expect(value.messages[0]).toEqual({ role: 'system', content: [{ type: 'text', text: 'Be terse.' }] });
    expect(value.reasoning).toEqual({ enabled: true, budgetTokens: 1024 });
    expect(warnings).toEqual([]);
  });

  test('thinking and effort settings: adaptive, disabled, effort alone, and bad values named', () => {
    const reasoning = (extra: Record<string, unknown>) => decodeAnthropicRequest({ ...base, ...extra }).value.reasoning;
    expect(reasoning({ thinking: { type: 'adaptive' } })).toEqual({ enabled: true });
    expect(reasoning({ thinking: { type: 'disabled' } })).toEqual({ enabled: false });
    expect(reasoning({ output_config: { effort: 'medium' } })).toEqual({ effort: 'medium' });
    const max = decodeAnthropicRequest({ ...base, output_config: { effort: 'max' } });
    expect(max.value.reasoning).toEqual({ effort: 'high' });
    expect(max.warnings.map((w) => w.field)).toEqual(['output_config.effort']);
    expect(rejects({ ...base, thinking: { type: 'enabled', budget_tokens: 10 } }).param).toBe('thinking.budget_tokens');
    expect(rejects({ ...base, thinking: { type: 'on' } }).param).toBe('thinking.type');
    expect(rejects({ ...base, output_config: { effort: 'huge' } }).param).toBe('output_config.effort');
  });

  test('cache_control is validated where it stands and kept on every block that holds it', () => {
    const { value } = decodeAnthropicRequest({
      ...base,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'a', cache_control: { type: 'ephemeral', ttl: '1h' } },
            {
              type: 'image',
              source: { type: 'url', url: 'https://example.com/a.png' },
              cache_control: { type: 'ephemeral' },
            },
          ],
        },
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 't1', name: 'f', input: {}, cache_control: { type: 'ephemeral' } }],
        },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: 't1', content: 'ok', cache_control: { type: 'ephemeral' } }],
        },
      ],
    });
    const marks = value.messages.flatMap((m) =>
      m.content.map((p) => ('cacheControl' in p ? p.cacheControl : undefined)),
    );
    expect(marks).toEqual([
      { type: 'ephemeral', ttl: '1h' },
      { type: 'ephemeral' },
      { type: 'ephemeral' },
      { type: 'ephemeral' },
    ]);
    const bad = rejects({
      ...base,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'a', cache_control: { type: 'forever' } }] }],
    });
    expect(bad.param).toBe('messages[0].content[0].cache_control.type');
  });

  test('validation errors name the field', () => {
    const cases: Array<[unknown, string, string]> = [
      [{ model: 'm', messages: [] }, 'max_tokens', 'max_tokens: is required'],
      [{ max_tokens: 5, messages: [] }, 'model', 'model: is required'],
      [{ ...base, messages: undefined }, 'messages', 'messages: is required'],
      [{ ...base, max_tokens: 0 }, 'max_tokens', 'max_tokens: must be at least 1'],
      [{ ...base, max_tokens: 1.5 }, 'max_tokens', 'max_tokens: must be an integer'],
      [{ ...base, model: 5 }, 'model', 'model: must be a string'],
      [{ ...base, temperature: 1.5 }, 'temperature', 'temperature: must be between 0 and 1'],
      [{ ...base, top_p: -0.1 }, 'top_p', 'top_p: must be between 0 and 1'],
      [{ ...base, temperature: 0.5, top_p: 0.9 }, 'top_p', 'top_p: use either temperature or top_p, not both'],
      [{ ...base, stop_sequences: ['ok', 7] }, 'stop_sequences[1]', 'stop_sequences[1]: must be a string'],
      [
        { ...base, messages: [{ role: 'bot', content: 'x' }] },
        'messages[0].role',
        'messages[0].role: must be one of user, assistant',
      ],
      [
        { ...base, messages: [{ role: 'user', content: 3 }] },
        'messages[0].content',
        'messages[0].content: must be a string or an array of content blocks',
      ],
      [
        {
          ...base,
          messages: [
            {
              role: 'user',
              content: [{ type: 'image', source: { type: 'base64', media_type: 'image/bmp', data: 'AA' } }],
            },
          ],
        },
        'messages[0].content[0].source.media_type',
        'messages[0].content[0].source.media_type: must be one of image/jpeg, image/png, image/gif, image/webp',
      ],
      [
        { ...base, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url' } }] }] },
        'messages[0].content[0].source.url',
        'messages[0].content[0].source.url: is required',
      ],
      [
        { ...base, messages: [{ role: 'user', content: [{ type: 'tool_use', id: 'a', name: 'f', input: {} }] }] },
        'messages[0].content[0].type',
        'messages[0].content[0].type: tool_use blocks are only allowed in assistant messages',
      ],
      [
        { ...base, messages: [{ role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 'f', input: [1] }] }] },
        'messages[0].content[0].input',
        'messages[0].content[0].input: must be an object',
      ],
      [
        { ...base, messages: [{ role: 'user', content: [{ type: 'tool_result', content: 'x' }] }] },
        'messages[0].content[0].tool_use_id',
        'messages[0].content[0].tool_use_id: is required',
      ],
      [
        { ...base, messages: [{ role: 'user', content: [{ type: 'video', url: 'x' }] }] },
        'messages[0].content[0].type',
        "messages[0].content[0].type: unsupported content block type 'video'",
      ],
      [
        { ...base, system: [{ type: 'image' }] },
        'system[0].type',
        'system[0].type: system content must be text blocks',
      ],
      [
        { ...base, tools: [{ type: 'web_search_20250305', name: 'web_search' }] },
        'tools[0].type',
        "tools[0].type: tool type 'web_search_20250305' is not supported; only custom tools (name, description, input_schema) are",
      ],
      [{ ...base, tools: [{ name: 'f' }] }, 'tools[0].input_schema', 'tools[0].input_schema: is required'],
      [
        { ...base, tools: [{ name: 'f', input_schema: 'x' }] },
        'tools[0].input_schema',
        'tools[0].input_schema: must be a JSON Schema object',
      ],
      [
        { ...base, tools: [{ name: 'bad name', input_schema: {} }] },
        'tools[0].name',
        'tools[0].name: must be 1 to 128 letters, digits, underscores or hyphens',
      ],
      [
        { ...base, mcp_servers: [{ type: 'url', url: 'https://x', name: 'x' }] },
        'mcp_servers',
        'mcp_servers: MCP servers are not supported; declare the tools in tools',
      ],
    ];
    for (const [body, param, message] of cases) {
      const err = rejects(body);
      expect({ param: err.param, message: err.message }).toEqual({ param, message });
    }
    expect(rejects('nope').message).toBe('request body: must be a JSON object');
  });

  test('a custom tool with type custom is accepted; cache_control kept, input_examples warned', () => {
    const { value, warnings } = decodeAnthropicRequest({
      ...base,
      tools: [
        {
          type: 'custom',
          name: 'f',
          input_schema: { type: 'object' },
          strict: true,
          cache_control: { type: 'ephemeral' },
          input_examples: [{}],
        },
      ],
    });
    expect(value.tools).toEqual([
      { name: 'f', parameters: { type: 'object' }, strict: true, cacheControl: { type: 'ephemeral' } },
    ]);
    expect(warnings).toEqual([
      {
        type: 'unsupported-setting',
        field: 'tools[0].input_examples',
        message: 'input_examples is not supported and was ignored',
      },
    ]);
  });
});

describe('encodeAnthropicRequest', () => {
  const conversation: CanonicalRequest = {
    model: 'acme/claude',
    stream: true,
    maxTokens: 300,
    messages: [
      { role: 'system', content: [{ type: 'text', text: 'Be helpful.' }] },
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris and Tokyo?' }] },
      { role: 'user', content: [{ type: 'image', source: { kind: 'url', url: 'https://example.com/map.png' } }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: '' },
          { type: 'tool-call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
          { type: 'tool-call', id: 'call_2', name: 'get_weather', arguments: '{"city": "Tok' },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'call_1', content: [{ type: 'text', text: '18C' }] },
          { type: 'tool-result', toolCallId: 'call_2', content: [], isError: true },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'Thanks!' }] },
    ],
    tools: [
      {
        name: 'get_weather',
        description: 'Weather',
        parameters: { type: 'object', properties: { city: { type: 'string' } } },
      },
    ],
    toolChoice: { type: 'required' },
    parallelToolCalls: false,
    temperature: 0.2,
    stopSequences: ['\n', 'END'],
    user: 'u-1',
  };

  test('system gathered, same-role turns merged, tool results as user tool_result blocks', () => {
    const { value, warnings } = encodeAnthropicRequest(conversation, 'claude-sonnet-4-5');
    expect(value).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 300,
      stream: true,
      system: 'Be helpful.',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Weather in Paris and Tokyo?' },
            { type: 'image', source: { type: 'url', url: 'https://example.com/map.png' } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
            { type: 'tool_use', id: 'call_2', name: 'get_weather', input: {} },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'call_1', content: [{ type: 'text', text: '18C' }] },
            { type: 'tool_result', tool_use_id: 'call_2', is_error: true },
            { type: 'text', text: 'Thanks!' },
          ],
        },
      ],
      temperature: 0.2,
      stop_sequences: ['END'],
      tools: [
        {
          name: 'get_weather',
          description: 'Weather',
          input_schema: { type: 'object', properties: { city: { type: 'string' } } },
        },
      ],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
      metadata: { user_id: 'u-1' },
    });
    expect(warnings).toEqual([
      {
        type: 'changed-value',
        field: 'messages[3].content[2].arguments',
        message: 'arguments of tool call call_2 are not a JSON object; sent as {}',
      },
      {
        type: 'changed-value',
        field: 'stop',
        message: 'whitespace-only stop sequences are not accepted by Anthropic and were dropped',
      },
    ]);
  });

  test('missing max_tokens defaults to 4096 with a warning; temperature above 1 is clamped; top_p with temperature dropped', () => {
    const { value, warnings } = encodeAnthropicRequest(
      {
        model: 'm',
        stream: false,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
        temperature: 1.6,
        topP: 0.5,
      },
      'up',
    );
    expect(value.max_tokens).toBe(DEFAULT_MAX_TOKENS);
    expect(value.temperature).toBe(1);
    expect(value.top_p).toBeUndefined();
    expect(warnings.map((w) => w.field)).toEqual(['max_tokens', 'temperature', 'top_p']);
  });

  test('base64 images, base tool choices and top_p alone', () => {
    const req: CanonicalRequest = {
      model: 'm',
      stream: false,
      maxTokens: 10,
      topP: 0.9,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { kind: 'base64', mediaType: 'image/jpeg', data: '/9j/' }, detail: 'high' },
          ],
        },
      ],
      tools: [{ name: 'f', parameters: { type: 'object' }, strict: true }],
      toolChoice: { type: 'tool', name: 'f' },
    };
    const { value, warnings } = encodeAnthropicRequest(req, 'up');
    expect(value.messages[0]!.content).toEqual([
      { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/' } },
    ]);
    expect(value.top_p).toBe(0.9);
    expect(value.tools).toEqual([{ name: 'f', input_schema: { type: 'object' }, strict: true }]);
    expect(value.tool_choice).toEqual({ type: 'tool', name: 'f' });
    expect(warnings).toEqual([
      {
        type: 'unsupported-setting',
        field: 'messages[0].content[0].detail',
        message: 'image detail is not supported by Anthropic and was ignored',
      },
    ]);
    expect(
      encodeAnthropicRequest({ ...req, toolChoice: { type: 'none' }, parallelToolCalls: false }, 'up').value
        .tool_choice,
    ).toEqual({ type: 'none' });
    expect(
      encodeAnthropicRequest({ ...req, toolChoice: undefined, parallelToolCalls: false }, 'up').value.tool_choice,
    ).toEqual({
      type: 'auto',
      disable_parallel_tool_use: true,
    });
    expect(encodeAnthropicRequest({ ...req, toolChoice: { type: 'auto' } }, 'up').value.tool_choice).toEqual({
      type: 'auto',
    });
  });

  test('JSON mode becomes a system instruction (with a warning); a JSON schema uses output_config.format', () => {
    const req: CanonicalRequest = {
      model: 'm',
      stream: false,
      maxTokens: 10,
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'You list fruit.' }] },
        { role: 'user', content: [{ type: 'text', text: 'Three fruit' }] },
      ],
      responseFormat: { type: 'json' },
    };
    const json = encodeAnthropicRequest(req, 'up');
    expect(json.value.system).toBe(`You list fruit.\n\n${JSON_MODE_INSTRUCTION}`);
    expect(json.value.output_config).toBeUndefined();
    expect(json.warnings).toEqual([
      {
        type: 'changed-value',
        field: 'response_format',
        message: 'Anthropic has no JSON mode; JSON output was requested through a system instruction',
      },
    ]);
    const schema = { type: 'object', properties: { fruit: { type: 'array', items: { type: 'string' } } } };
    const structured = encodeAnthropicRequest(
      { ...req, responseFormat: { type: 'json-schema', name: 'fruit', schema, strict: true } },
      'up',
    );
    expect(structured.value.system).toBe('You list fruit.');
    expect(structured.value.output_config).toEqual({ format: { type: 'json_schema', schema } });
    expect(structured.warnings).toEqual([]);
  });

  test('a system message in mid-conversation is hoisted with a warning', () => {
    const { value, warnings } = encodeAnthropicRequest(
      {
        model: 'm',
        stream: false,
        maxTokens: 5,
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'a' }] },
          { role: 'system', content: [{ type: 'text', text: 'late rule' }] },
          { role: 'assistant', content: [{ type: 'text', text: 'b' }] },
        ],
      },
      'up',
    );
    expect(value.system).toBe('late rule');
    expect(value.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(warnings[0]).toMatchObject({ type: 'changed-value', field: 'messages[1]' });
  });

  test('decode → encode keeps an Anthropic conversation intact', async () => {
    const body = (await Bun.file(`${FIXTURES}/request-conversation.json`).json()) as Record<string, unknown>;
    const { value } = encodeAnthropicRequest(decodeAnthropicRequest(body).value, 'claude-up');
    // The cache marks and the thinking block reach the upstream as the client wrote them.
    expect(value.system).toEqual(body.system as never);
    expect(value.tools?.[0]?.cache_control).toEqual({ type: 'ephemeral' });
    expect(value.messages.map((m) => [m.role, m.content.map((b) => b.type)])).toEqual([
      ['user', ['text', 'image', 'image']],
      ['assistant', ['thinking', 'text', 'tool_use']],
      ['user', ['tool_result', 'tool_result', 'text']],
    ]);
    expect(value.messages[1]!.content[0]).toEqual({
      type: 'thinking',
      thinking: 'The user wants two things.',
      signature: 'sig',
    });
    expect(value.messages[1]!.content[2]).toEqual({
      type: 'tool_use',
      id: 'toolu_01A',
      name: 'get_weather',
      input: { city: 'Paris', unit: 'c' },
    });
    expect(value.messages[2]!.content[1]).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_01B',
      content: [{ type: 'text', text: 'timeout' }],
      is_error: true,
    });
    expect(value.tool_choice).toEqual({ type: 'any', disable_parallel_tool_use: true });
  });
});

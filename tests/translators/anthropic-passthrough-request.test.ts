import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import {
  anthropicCanonicalView,
  anthropicCountTokensRequest,
  anthropicPassthroughRequest,
} from '../../translators/passthrough/index.ts';
import { DEFAULT_MAX_USES, DEFINED_TOOL_TOKENS } from '../../translators/passthrough/anthropic-tool-use.ts';

const mark = { type: 'ephemeral' };
const pdf = { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0x' } };
const textDoc = { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'The sky is blue.' } };
const search = {
  type: 'search_result',
  source: 'https://example.com',
  title: 'T',
  content: [{ type: 'text', text: 's' }],
};
const upstreamFile = { type: 'document', source: { type: 'file', file_id: 'file_011' } };
const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

describe('a Messages body passed through to an Anthropic upstream', () => {
  test('with nothing to withhold it is the client’s own object, untouched, and nothing is uncounted', () => {
    const body = {
      model: 'gw/model',
      max_tokens: 100,
      system: [{ type: 'text', text: 'ctx', cache_control: mark }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: mark }] }],
      top_k: 40,
      cache_control: mark,
      output_config: { effort: 'max' },
      metadata: { user_id: 'u-1' },
      tools: [{ name: 'f', input_schema: { type: 'object' } }],
      stream: true,
    };
    const { value, warnings, uncounted } = anthropicPassthroughRequest(body, []);
    expect(value).toBe(body);
    expect(warnings).toEqual([]);
    expect(uncounted).toEqual({ textTokens: 0, images: 0, files: 0 });
  });

  test('settings that change the price, name the operator’s account or are unknown are withheld, told when set', () => {
    const body = {
      model: 'm',
      max_tokens: 1,
      messages: [],
      service_tier: 'auto',
      speed: 'fast',
      inference_geo: 'us',
      container: 'cntr_1',
      context_management: { edits: [] },
      workspace_id: null,
      x_new_feature: { on: true },
    };
    const { value, warnings } = anthropicPassthroughRequest(body, []);
    expect(value).toEqual({ model: 'm', max_tokens: 1, messages: [] });
    expect(warnings.map((w) => [w.type, w.field])).toEqual([
      ['unsupported-setting', 'service_tier'],
      ['unsupported-setting', 'speed'],
      ['unsupported-setting', 'inference_geo'],
      ['unsupported-setting', 'container'],
      ['unsupported-setting', 'context_management'],
      ['unsupported-setting', 'x_new_feature'],
    ]);
    expect(body.service_tier).toBe('auto');
  });

  test('documents and search results are sent and held: a PDF as a file, a text document and the rest by their bytes', () => {
    const thinkingInUserTurn = { type: 'thinking', thinking: 'hmm', signature: 'sig' };
    const serverUse = { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'q' } };
    const body = {
      model: 'm',
      max_tokens: 1,
      messages: [
        { role: 'user', content: [pdf, textDoc, search, thinkingInUserTurn, { type: 'text', text: 'read' }] },
        { role: 'assistant', content: [{ type: 'thinking', thinking: 'kept', signature: 's' }, serverUse] },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: 't1', content: [search, { type: 'text', text: 'r' }] }],
        },
      ],
      tools: [{ name: 'f', input_schema: { type: 'object' }, input_examples: [{ input: { q: 'x' } }] }],
    };
    const { value, warnings, uncounted } = anthropicPassthroughRequest(body, []);
    expect(value).toBe(body);
    expect(warnings).toEqual([]);
    expect(uncounted).toEqual({
      textTokens:
        bytes(textDoc) +
        bytes(search) * 2 +
        bytes(thinkingInUserTurn) +
        bytes(serverUse) +
        bytes([{ input: { q: 'x' } }]),
      images: 0,
      files: 1,
    });
  });

  test('blocks naming a file of the provider’s Files API are refused where they stand, naming the field', () => {
    const body = (content: unknown[]) => ({ model: 'm', max_tokens: 1, messages: [{ role: 'user', content }] });
    const refused = (content: unknown[]) => {
      try {
        anthropicPassthroughRequest(body(content), []);
      } catch (err) {
        return (err as { param?: string }).param;
      }
      return undefined;
    };
    expect(refused([{ type: 'text', text: 'a' }, upstreamFile])).toBe('messages[0].content[1].source.type');
    expect(refused([{ type: 'container_upload', file_id: 'file_012' }])).toBe('messages[0].content[0].type');
    expect(refused([{ type: 'tool_result', tool_use_id: 't1', content: [textDoc, upstreamFile] }])).toBe(
      'messages[0].content[0].content[1].source.type',
    );
    expect(refused([pdf, textDoc, search])).toBeUndefined();
  });

  test('property: only forwarded top-level fields leave, every other set one is told, and the input is never changed', () => {
    const key = fc.oneof(
      fc.constantFrom('top_k', 'temperature', 'metadata', 'service_tier', 'speed', 'container', 'cache_control'),
      fc.string({ maxLength: 8 }),
    );
    fc.assert(
      fc.property(fc.dictionary(key, fc.jsonValue({ maxDepth: 2 })), (extra) => {
        const body = { ...extra, model: 'm', max_tokens: 1, messages: [] };
        const before = structuredClone(body);
        const { value, warnings } = anthropicPassthroughRequest(body, []);
        const withheld = Object.keys(body).filter((k) => !Object.hasOwn(value, k));
        for (const k of withheld) expect(['top_k', 'temperature', 'metadata', 'cache_control']).not.toContain(k);
        const told = warnings.map((w) => w.field);
        const setWithheld = withheld.filter((k) => body[k as keyof typeof body] !== null);
        expect(told).toEqual(setWithheld);
        expect(body).toEqual(before);
      }),
      { numRuns: 300 },
    );
  });
});

describe('Anthropic-defined tools in a Messages body passed through', () => {
  const custom = { name: 'lookup', input_schema: { type: 'object' } };
  const bash = { type: 'bash_20250124', name: 'bash' };
  const fetchTool = { type: 'web_fetch_20250910', name: 'web_fetch', max_uses: 3 };
  const search = { type: 'web_search_20250305', name: 'web_search', max_uses: 5 };
  const body = (tools: unknown[], extra: object = {}) => ({
    model: 'm',
    max_tokens: 1,
    messages: [{ role: 'user', content: 'hi' }],
    tools,
    ...extra,
  });

  test('the gateway reads only the client’s own tools, and a tool_choice naming another is left to the upstream', () => {
    const plain = body([custom]);
    expect(anthropicCanonicalView(plain)).toBe(plain);
    const mixed = body([bash, custom, search], { tool_choice: { type: 'tool', name: 'web_search' } });
    expect(anthropicCanonicalView(mixed)).toEqual({ ...body([custom]) });
    const own = body([search, custom], { tool_choice: { type: 'tool', name: 'lookup' } });
    expect(anthropicCanonicalView(own).tool_choice).toEqual({ type: 'tool', name: 'lookup' });
  });

  test('client tools and web fetch cost tokens, held with Anthropic’s own prompt for them; searches are billed per call', () => {
    const sent = anthropicPassthroughRequest(body([custom, bash, fetchTool, search]), []);
    expect(sent.value.tools).toEqual([custom, bash, fetchTool, search]);
    expect(sent.warnings).toEqual([]);
    expect(sent.uncounted.textTokens).toBe(
      Buffer.byteLength(JSON.stringify(bash)) +
        Buffer.byteLength(JSON.stringify(fetchTool)) +
        Buffer.byteLength(JSON.stringify(search)) +
        3 * DEFINED_TOOL_TOKENS,
    );
    expect(sent.uncounted.perCallTools).toEqual({ tools: [{ name: 'web_search', at: 'tools[3]' }], maxCalls: 5 });
    // What web fetch and web search read into the conversation is held as a file is.
    expect(sent.uncounted.files).toBe(2);
  });

  test('a search without a usable max_uses gets one upstream, with a warning; the client’s body is not changed', () => {
    for (const [asked, bound] of [
      [undefined, DEFAULT_MAX_USES],
      [0, DEFAULT_MAX_USES],
      [2.5, DEFAULT_MAX_USES],
      [1e9, 1_000],
    ] as const) {
      const tool = {
        type: 'web_search_20250305',
        name: 'web_search',
        ...(asked === undefined ? {} : { max_uses: asked }),
      };
      const input = body([custom, tool]);
      const before = structuredClone(input);
      const sent = anthropicPassthroughRequest(input, []);
      expect(sent.value.tools).toEqual([custom, { ...tool, max_uses: bound }]);
      expect(sent.uncounted.perCallTools?.maxCalls).toBe(bound);
      expect(sent.warnings.map((w) => [w.type, w.field])).toEqual([['changed-value', 'tools[1].max_uses']]);
      expect(input).toEqual(before);
    }
  });

  test('tools whose cost has no bound are refused, naming the field', () => {
    for (const type of ['code_execution_20250825', 'tool_search_tool_regex_20251119', 'mcp_toolset', 'future_tool']) {
      expect(() => anthropicPassthroughRequest(body([custom, { type, name: 'x' }]), [])).toThrow(
        `tools[1].type: tool type '${type}' is not supported`,
      );
    }
  });
});

describe('a count_tokens body passed through to an Anthropic upstream', () => {
  test('only the fields count_tokens takes go; the Messages rules apply to them', () => {
    const body = {
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      system: 's',
      tools: [{ type: 'web_search_20250305', name: 'web_search' }],
      thinking: { type: 'adaptive' },
      cache_control: { type: 'ephemeral' },
      max_tokens: 5,
      temperature: 0.2,
      stream: true,
      speed: 'fast',
    };
    const { value, warnings } = anthropicCountTokensRequest(body);
    expect(value).toEqual({
      messages: body.messages,
      system: 's',
      tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: DEFAULT_MAX_USES }],
      thinking: { type: 'adaptive' },
      cache_control: { type: 'ephemeral' },
    });
    expect(warnings.map((w) => w.field)).toEqual(['tools[0].max_uses', 'speed']);
  });
});

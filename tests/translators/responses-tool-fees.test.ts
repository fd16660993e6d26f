import { describe, expect, test } from 'bun:test';
import { builtInToolCalls, fromResponsesUsage } from '../../translators/responses/usage.ts';
import {
  DEFAULT_MAX_TOOL_CALLS,
  MAX_TOOL_CALLS,
  perCallTools,
  serverRunTools,
} from '../../translators/passthrough/responses-tool-fees.ts';
import { responsesPassthroughRequest } from '../../translators/passthrough/index.ts';
import type { TranslationWarning } from '../../translators/canonical/index.ts';
import { createResponsesStreamDecoder } from '../../translators/responses/index.ts';

describe('built-in tools billed per call', () => {
  test('tools that cost only tokens are not billed per call; every other one is, web search under one name', () => {
    const warnings: TranslationWarning[] = [];
    const body = {
      tools: [
        { type: 'function', name: 'f', parameters: {} },
        { type: 'mcp', server_label: 's' },
        { type: 'web_search_preview' },
        { type: 'code_interpreter', container: { type: 'auto' } },
        { type: 'shell' },
        { type: 'future_tool' },
      ],
      max_tool_calls: 3,
    };
    const value = { ...body };
    expect(perCallTools(body, value, warnings)).toEqual({
      tools: [
        { name: 'web_search', at: 'tools[2]' },
        { name: 'code_interpreter', at: 'tools[3]' },
        { name: 'future_tool', at: 'tools[5]' },
      ],
      maxCalls: 3,
    });
    expect(value).toEqual(body);
    expect(warnings).toEqual([]);
    expect(perCallTools({ tools: [{ type: 'function', name: 'f' }] }, {}, warnings)).toBeUndefined();
    expect(perCallTools({}, {}, warnings)).toBeUndefined();
    // Tools the upstream runs itself read into the conversation: MCP, the search, the interpreter, the unknown one.
    expect(serverRunTools(body)).toBe(4);
    expect(serverRunTools({ tools: [{ type: 'function' }, { type: 'shell' }] })).toBe(0);
  });

  test('without max_tool_calls the gateway sets a bound upstream, and says so', () => {
    for (const asked of [undefined, null, -1, 2.5, 'many']) {
      const warnings: TranslationWarning[] = [];
      const value: Record<string, unknown> = {};
      const body = { tools: [{ type: 'web_search' }], max_tool_calls: asked };
      expect(perCallTools(body, value, warnings)?.maxCalls).toBe(DEFAULT_MAX_TOOL_CALLS);
      expect(value.max_tool_calls).toBe(DEFAULT_MAX_TOOL_CALLS);
      expect(warnings.map((w) => [w.type, w.field])).toEqual([['changed-value', 'max_tool_calls']]);
    }
    for (const asked of [1_001, 1e308, Number.MAX_SAFE_INTEGER]) {
      const value: Record<string, unknown> = {};
      const body = { tools: [{ type: 'web_search' }], max_tool_calls: asked };
      expect(perCallTools(body, value, [])?.maxCalls).toBe(MAX_TOOL_CALLS);
      expect(value.max_tool_calls).toBe(MAX_TOOL_CALLS);
    }
    const sent = responsesPassthroughRequest({ model: 'm', input: 'hi', tools: [{ type: 'web_search' }] }, []);
    expect(sent.value.max_tool_calls).toBe(DEFAULT_MAX_TOOL_CALLS);
    expect(sent.uncounted.perCallTools?.maxCalls).toBe(DEFAULT_MAX_TOOL_CALLS);
    const plain = responsesPassthroughRequest({ model: 'm', input: 'hi' }, []);
    expect(plain.value).not.toHaveProperty('max_tool_calls');
    expect(plain.uncounted.perCallTools).toBeUndefined();
  });

  test('an answer’s built-in call items are counted by tool; the client’s own calls and odd types are not', () => {
    const output = [
      { type: 'web_search_call', id: 'ws_1' },
      { type: 'reasoning' },
      { type: 'web_search_call', id: 'ws_2' },
      { type: 'code_interpreter_call' },
      { type: 'function_call', name: 'f' },
      { type: 'custom_tool_call' },
      { type: 'message' },
      { type: 'x\u0000_call' },
      { type: 'Weird_call' },
      null,
    ];
    expect(builtInToolCalls(output)).toEqual({ web_search: 2, code_interpreter: 1 });
    expect(builtInToolCalls([{ type: 'message' }])).toBeUndefined();
    expect(builtInToolCalls('nope')).toBeUndefined();
    const usage = fromResponsesUsage({ input_tokens: 5, output_tokens: 7 }, output);
    expect(usage).toMatchObject({ inputTokens: 5, outputTokens: 7, builtInToolCalls: { web_search: 2 } });
    expect(fromResponsesUsage({ input_tokens: 5, output_tokens: 7 })).not.toHaveProperty('builtInToolCalls');
  });
});

describe('built-in tool calls in a Responses stream', () => {
  const sse = (type: string, data: object) => ({ event: type, data: JSON.stringify({ type, ...data }), id: undefined });
  const search = (id: string) => ({ type: 'web_search_call', id, status: 'completed' });

  test('each call is counted as it finishes, so a stream cut before its end still bills it; the end bills the most either shows', () => {
    const decoder = createResponsesStreamDecoder({ model: 'm' });
    const events = [
      sse('response.created', { response: { id: 'resp_1', created_at: 1 } }),
      sse('response.output_item.done', { output_index: 0, item: search('ws_1') }),
      sse('response.output_item.done', { output_index: 1, item: search('ws_2') }),
    ].flatMap((message) => decoder.push(message));
    expect(events.filter((e) => e.type === 'usage')).toEqual([
      { type: 'usage', usage: { builtInToolCalls: { web_search: 1 } } },
      { type: 'usage', usage: { builtInToolCalls: { web_search: 2 } } },
    ]);
    const done = decoder.push(
      sse('response.completed', {
        response: {
          status: 'completed',
          usage: { input_tokens: 1, output_tokens: 1 },
          output: [search('ws_1'), { type: 'code_interpreter_call' }],
        },
      }),
    );
    const finish = [...done, ...decoder.end()].find((e) => e.type === 'finish');
    expect(finish?.type === 'finish' && finish.usage.builtInToolCalls).toEqual({ web_search: 2, code_interpreter: 1 });
  });
});

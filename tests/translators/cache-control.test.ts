import { describe, expect, test } from 'bun:test';
import { decodeAnthropicRequest, encodeAnthropicRequest } from '../../translators/anthropic-messages/index.ts';
import { decodeChatRequest, encodeChatRequest } from '../../translators/chat-completions/index.ts';
import { decodeResponsesRequest, encodeResponsesResponse } from '../../translators/responses/index.ts';

describe('cache_control on chat completions', () => {
  test('content-part and message-level marks reach an Anthropic request on the same blocks', () => {
    const { value, warnings } = decodeChatRequest({
      model: 'm',
      messages: [
        { role: 'system', content: 'Long rules.', cache_control: { type: 'ephemeral' } },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'doc', cache_control: { type: 'ephemeral', ttl: '1h' } },
            { type: 'text', text: 'question' },
          ],
        },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'result', cache_control: { type: 'ephemeral' } },
      ],
    });
    expect(warnings).toEqual([]);
    const body = encodeAnthropicRequest(value.request, 'up').value;
    expect(body.system).toEqual([{ type: 'text', text: 'Long rules.', cache_control: { type: 'ephemeral' } }]);
    expect(body.messages[0]?.content).toEqual([
      { type: 'text', text: 'doc', cache_control: { type: 'ephemeral', ttl: '1h' } },
      { type: 'text', text: 'question' },
    ]);
    expect(body.messages[2]?.content).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'c1',
        content: [{ type: 'text', text: 'result' }],
        cache_control: { type: 'ephemeral' },
      },
    ]);
  });

  test('a malformed mark is a 400 naming it; toward a chat upstream marks are left out with one warning', () => {
    expect(() =>
      decodeChatRequest({
        model: 'm',
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'a', cache_control: { type: 'ephemeral', ttl: 5 } }] },
        ],
      }),
    ).toThrow('messages[0].content[0].cache_control.ttl');
    const req = decodeAnthropicRequest({
      model: 'm',
      max_tokens: 5,
      system: [{ type: 'text', text: 's', cache_control: { type: 'ephemeral' } }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'q', cache_control: { type: 'ephemeral' } }] }],
    }).value;
    const { value, warnings } = encodeChatRequest(req, 'up');
    expect(JSON.stringify(value)).not.toContain('cache');
    expect(warnings.map((w) => [w.type, w.field])).toEqual([['unsupported-setting', 'cache_control']]);
  });
});

describe('reasoning echoes and signatures', () => {
  test('the Responses object echoes the requested effort', () => {
    const decoded = decodeResponsesRequest({ model: 'm', input: 'q', reasoning: { effort: 'low' } }).value;
    const res = encodeResponsesResponse(
      {
        id: 'resp_1',
        model: 'm',
        created: 1,
        content: [{ type: 'text', text: 'a' }],
        finishReason: { unified: 'stop' },
        usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
      },
      { ...decoded.echo, responseId: 'resp_1', completedAt: 2 },
    );
    expect(res.reasoning).toEqual({ effort: 'low', summary: null });
  });

  test('an empty thinking signature (answers from other upstreams) counts as none and is not sent to Anthropic', () => {
    const req = decodeAnthropicRequest({
      model: 'm',
      max_tokens: 5,
      messages: [
        { role: 'user', content: 'q' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'deepseek thought', signature: '' },
            { type: 'text', text: 'a' },
          ],
        },
        { role: 'user', content: 'q2' },
      ],
    }).value;
    expect(req.messages[1]?.content[0]).toEqual({ type: 'reasoning', text: 'deepseek thought' });
    const { value, warnings } = encodeAnthropicRequest(req, 'up');
    expect(value.messages[1]?.content).toEqual([{ type: 'text', text: 'a' }]);
    expect(warnings.map((w) => [w.type, w.field])).toEqual([['unsupported-content', 'messages[1].content[0]']]);
  });
});

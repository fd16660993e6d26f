import { describe, expect, test } from 'bun:test';
import { decodeAnthropicRequest, encodeAnthropicRequest } from '../../translators/anthropic-messages/index.ts';
import type { CanonicalRequest } from '../../translators/canonical/request.ts';
import { decodeChatRequest, encodeChatRequest } from '../../translators/chat-completions/index.ts';
import { encodeResponsesRequest } from '../../translators/responses/encode-request.ts';
import { EFFORT_BUDGET, effortForBudget } from '../../translators/common/reasoning-effort.ts';

const base = (extra: Partial<CanonicalRequest> = {}): CanonicalRequest => ({
  model: 'm',
  messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
  stream: false,
  ...extra,
});

describe('effort ↔ budget', () => {
  test('the table maps each effort to a budget that maps back to it', () => {
    for (const [effort, budget] of Object.entries(EFFORT_BUDGET))
      expect(effortForBudget(budget) as string).toBe(effort);
    expect([1024, 2047, 2048, 8191, 8192, 16383, 16384, 100000].map(effortForBudget)).toEqual([
      'minimal',
      'minimal',
      'low',
      'low',
      'medium',
      'medium',
      'high',
      'high',
    ]);
  });

  test('chat reasoning_effort → Anthropic thinking budget; max_tokens raised only when the gateway chose it', () => {
    const chat = decodeChatRequest({
      model: 'm',
      messages: [{ role: 'user', content: 'q' }],
      reasoning_effort: 'high',
    });
    expect(chat.warnings).toEqual([]);
    const encoded = encodeAnthropicRequest(chat.value.request, 'up');
    expect(encoded.warnings.map((w) => w.message)).toEqual([`Anthropic requires max_tokens; ${16384 + 4096} was sent`]);
    const defaulted = encoded.value;
    expect(defaulted.thinking).toEqual({ type: 'enabled', budget_tokens: 16384 });
    expect(defaulted.max_tokens).toBe(16384 + 4096);
    expect(defaulted.output_config).toBeUndefined();

    const tight = encodeAnthropicRequest({ ...chat.value.request, maxTokens: 5000 }, 'up');
    expect(tight.value.thinking).toEqual({ type: 'enabled', budget_tokens: 4999 });
    expect(tight.value.max_tokens).toBe(5000);
    expect(tight.warnings.map((w) => [w.type, w.field])).toEqual([['changed-value', 'reasoning']]);

    const tiny = encodeAnthropicRequest({ ...chat.value.request, maxTokens: 500 }, 'up');
    expect(tiny.value.thinking).toBeUndefined();
    expect(tiny.warnings.map((w) => [w.type, w.field])).toEqual([['unsupported-setting', 'reasoning']]);
  });

  test('Anthropic thinking → Anthropic unchanged; → OpenAI formats as the table effort, with a warning', () => {
    const body = {
      model: 'm',
      max_tokens: 20000,
      thinking: { type: 'enabled' as const, budget_tokens: 10000 },
      messages: [{ role: 'user', content: 'q' }],
    };
    const req = decodeAnthropicRequest(body).value;
    expect(encodeAnthropicRequest(req, 'up').value.thinking).toEqual(body.thinking);
    const chat = encodeChatRequest(req, 'up');
    expect(chat.value.reasoning_effort).toBe('medium');
    expect(chat.warnings.map((w) => [w.type, w.field])).toEqual([['changed-value', 'reasoning_effort']]);
    const responses = encodeResponsesRequest(req, 'up');
    expect(responses.value.reasoning).toEqual({ effort: 'medium' });
    expect(responses.warnings.map((w) => [w.type, w.field])).toEqual([['changed-value', 'reasoning.effort']]);
  });

  test('adaptive, disabled and output_config.effort', () => {
    const enc = (extra: Partial<CanonicalRequest>) => encodeAnthropicRequest(base({ maxTokens: 4000, ...extra }), 'up');
    expect(enc({ reasoning: { enabled: true } }).value.thinking).toEqual({ type: 'adaptive' });
    expect(enc({ reasoning: { enabled: false } }).value.thinking).toEqual({ type: 'disabled' });
    const effortOnly = enc({ reasoning: { effort: 'medium' } }).value;
    expect(effortOnly.thinking).toBeUndefined();
    expect(effortOnly.output_config).toEqual({ effort: 'medium' });
    const minimal = enc({ reasoning: { effort: 'minimal' } });
    expect(minimal.value.output_config).toEqual({ effort: 'low' });
    expect(minimal.warnings.map((w) => w.field)).toEqual(['reasoning']);
    // Off cannot be said to an OpenAI-format upstream.
    const off = encodeChatRequest(base({ reasoning: { enabled: false } }), 'up');
    expect(off.value.reasoning_effort).toBeUndefined();
    expect(off.warnings.map((w) => [w.type, w.field])).toEqual([['unsupported-setting', 'reasoning_effort']]);
  });

  test('earlier reasoning: signed goes back to Anthropic as thinking; unsigned is left out there and toward OpenAI, with warnings', () => {
    const req = base({
      maxTokens: 1000,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'q' }] },
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'signed', signature: 'sig==' },
            { type: 'reasoning', text: '', redacted: 'DATA' },
            { type: 'reasoning', text: 'from deepseek' },
            { type: 'text', text: 'a' },
          ],
        },
        { role: 'user', content: [{ type: 'text', text: 'q2' }] },
      ],
    });
    const ant = encodeAnthropicRequest(req, 'up');
    expect(ant.value.messages[1]?.content).toEqual([
      { type: 'thinking', thinking: 'signed', signature: 'sig==' },
      { type: 'redacted_thinking', data: 'DATA' },
      { type: 'text', text: 'a' },
    ]);
    expect(ant.warnings.map((w) => [w.type, w.field])).toEqual([['unsupported-content', 'messages[1].content[2]']]);
    const chat = encodeChatRequest(req, 'up');
    expect(chat.value.messages[1]).toEqual({ role: 'assistant', content: 'a' });
    expect(chat.warnings.map((w) => [w.type, w.field])).toEqual([['unsupported-content', 'messages[1]']]);
  });
});

describe('fields a decoder does not know are warned about, not dropped silently', () => {
  test('chat, Messages and Responses each name the unknown field; null values pass quietly', async () => {
    const { decodeResponsesRequest } = await import('../../translators/responses/index.ts');
    const chat = decodeChatRequest({ model: 'm', messages: [{ role: 'user', content: 'q' }], top_k: 40, min_p: null });
    expect(chat.warnings.map((w) => [w.type, w.field])).toEqual([['unsupported-setting', 'top_k']]);
    const messages = decodeAnthropicRequest({
      model: 'm',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'q' }],
      reasoning_effort: 'high',
    });
    expect(messages.warnings.map((w) => [w.type, w.field])).toEqual([['unsupported-setting', 'reasoning_effort']]);
    const responses = decodeResponsesRequest({ model: 'm', input: 'q', thinking: { type: 'enabled' } });
    expect(responses.warnings.map((w) => [w.type, w.field])).toEqual([['unsupported-setting', 'thinking']]);
  });
});

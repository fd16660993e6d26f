import { describe, expect, test } from 'bun:test';
import {
  decodeAnthropicCountTokensRequest,
  decodeAnthropicRequest,
  encodeAnthropicCountTokensRequest,
} from '../../translators/anthropic-messages/index.ts';
import { InvalidRequestError } from '../../translators/canonical/errors.ts';

const body = {
  model: 'ant/claude',
  system: 'be brief',
  messages: [{ role: 'user', content: 'How many tokens?' }],
  tools: [{ name: 'lookup', description: 'Look up', input_schema: { type: 'object', properties: {} } }],
  tool_choice: { type: 'auto' },
};

describe('count_tokens requests', () => {
  test('decoded like a Messages body, without max_tokens', () => {
    const { value, warnings } = decodeAnthropicCountTokensRequest(body);
    const messages = decodeAnthropicRequest({ ...body, max_tokens: 5 }).value;
    expect(value).toEqual({ ...messages, maxTokens: undefined } as typeof value);
    expect('maxTokens' in value).toBe(false);
    expect(warnings).toEqual([]);
  });

  test('errors name the field as /v1/messages does', () => {
    const cases: Array<[unknown, string]> = [
      [{ messages: [] }, 'model'],
      [{ model: 'x', messages: [{ role: 'robot', content: 'x' }] }, 'messages[0].role'],
      [{ model: 'x', messages: [{ role: 'user', content: [{ type: 'nope' }] }] }, 'messages[0].content[0].type'],
    ];
    for (const [input, param] of cases) {
      let caught: unknown;
      try {
        decodeAnthropicCountTokensRequest(input);
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(InvalidRequestError);
      expect((caught as InvalidRequestError).param).toBe(param);
    }
  });

  test('encoded with the input fields only, under the upstream model name', () => {
    const { value, warnings } = encodeAnthropicCountTokensRequest(
      decodeAnthropicCountTokensRequest(body).value,
      'claude-up',
    );
    expect(value).toEqual({
      model: 'claude-up',
      system: 'be brief',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'How many tokens?' }] }],
      tools: [{ name: 'lookup', description: 'Look up', input_schema: { type: 'object', properties: {} } }],
      tool_choice: { type: 'auto' },
    });
    expect(Object.keys(value)).not.toContain('max_tokens');
    expect(Object.keys(value)).not.toContain('stream');
    expect(warnings).toEqual([]);
  });
});

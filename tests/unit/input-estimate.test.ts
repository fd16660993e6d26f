import { describe, expect, test } from 'bun:test';
import type { CanonicalRequest } from '../../translators/canonical/index.ts';
import { nothingUncounted } from '../../translators/passthrough/index.ts';
import { estimateInputTokens } from '../../src/llm/input-estimate.ts';

const request = (overrides: Partial<CanonicalRequest> = {}): CanonicalRequest => ({
  model: 'acme/chat',
  stream: false,
  messages: [{ role: 'user', content: [{ type: 'text', text: 'x'.repeat(400) }] }],
  ...overrides,
});

describe('the input estimate (tpm admission, a stream cut short)', () => {
  test('text at four characters a token', () => {
    expect(estimateInputTokens(request())).toBe(100);
  });

  test('tool definitions, calls, results and images count, not only the text', () => {
    const withTools = request({
      tools: [{ name: 'lookup', description: 'd'.repeat(400), parameters: { type: 'object' } }],
      messages: [
        { role: 'user', content: [{ type: 'image', source: { kind: 'url', url: 'https://example.com/a.png' } }] },
        {
          role: 'assistant',
          content: [{ type: 'tool-call', id: 'c1', name: 'lookup', arguments: `{"q":"${'q'.repeat(392)}"}` }],
        },
        {
          role: 'tool',
          content: [{ type: 'tool-result', toolCallId: 'c1', content: [{ type: 'text', text: 'r'.repeat(800) }] }],
        },
      ],
    });
    const tools = Math.ceil(JSON.stringify(withTools.tools).length / 4);
    expect(estimateInputTokens(withTools)).toBe(1_000 + 100 + 200 + tools);
  });

  test('what a passed-through body sends beyond the canonical request is added', () => {
    const base = estimateInputTokens(request());
    expect(estimateInputTokens(request(), nothingUncounted())).toBe(base);
    expect(estimateInputTokens(request(), { textTokens: 4_000, images: 2, files: 1 })).toBe(
      base + 1_000 + 2 * 1_000 + 3_000,
    );
  });
});

import { expect, test } from 'bun:test';
import fc from 'fast-check';
import { toUnits } from '../../src/accounts/money.ts';
import { llmCost } from '../../src/llm/pricing.ts';
import { affordableOutputTokens, worstCaseHold } from '../../src/llm/worst-case.ts';
import type { CanonicalRequest } from '../../translators/canonical/index.ts';

const model = {
  id: 'x/y',
  category: 'llm',
  max_output: 8192,
  pricing: { input_per_mtok: 3, output_per_mtok: 15 },
} as never;
const request = (text: string, maxTokens?: number): CanonicalRequest => ({
  model: 'x/y',
  messages: [{ role: 'user', content: [{ type: 'text', text }] }],
  stream: false,
  maxTokens,
});

test('the hold covers the real cost of any usage within its bounds', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'grapheme' }), fc.integer({ min: 1, max: 8192 }), (text, maxTokens) => {
      const hold = worstCaseHold(request(text, maxTokens), model);
      // Byte-level tokenizers spend at least one byte per token: input ≤ bytes.
      const worst = llmCost((model as { pricing: never }).pricing, {
        inputTokens: Buffer.byteLength(text),
        outputTokens: maxTokens,
        totalTokens: 0,
      } as never);
      expect(hold.units).toBeGreaterThanOrEqual(toUnits(worst));
    }),
  );
});

test('without max_tokens, or with more than the model can write, the model ceiling is held', () => {
  expect(worstCaseHold(request('hi'), model).outputTokens).toBe(8192);
  expect(worstCaseHold(request('hi', 1e308), model).outputTokens).toBe(8192);
  expect(worstCaseHold(request('hi', 100), model).outputTokens).toBe(100);
});

test('the affordable max_tokens is the largest whose hold fits', () => {
  fc.assert(
    fc.property(fc.bigInt({ min: 0n, max: 10_000_000_000n }), (available) => {
      const hold = worstCaseHold(request('hello there', 8192), model);
      const n = affordableOutputTokens(available, hold, model);
      if (n > 0) expect(worstCaseHold(request('hello there', n), model).units <= available).toBe(true);
      if (n < 8192) expect(worstCaseHold(request('hello there', n + 1), model).units > available).toBe(true);
    }),
  );
});

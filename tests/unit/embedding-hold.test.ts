import { expect, test } from 'bun:test';
import fc from 'fast-check';
import { toUnits } from '../../src/accounts/money.ts';
import { embeddingHold } from '../../src/embeddings/embedding-hold.ts';
import { llmCost } from '../../src/llm/pricing.ts';
import { embedInputTokens } from '../../providers/sandbox/embed-model.ts';
import type { EmbeddingInput } from '../../translators/embeddings/index.ts';

const model = { id: 'x/e', category: 'embedding', display_name: 'E', pricing: { input_per_mtok: 0.13 } } as const;
const charge = (tokens: number) =>
  toUnits(llmCost(model.pricing, { inputTokens: tokens, outputTokens: 0, totalTokens: 0 }));

const input: fc.Arbitrary<EmbeddingInput> = fc.oneof(
  fc.string({ unit: 'grapheme', minLength: 1 }).map((text) => ({ type: 'text' as const, text })),
  fc.array(fc.nat(), { minLength: 1, maxLength: 50 }).map((tokens) => ({ type: 'tokens' as const, tokens })),
);

test('the hold covers any byte-level tokenizer’s count (≤ one token per byte) and the sandbox’s count', () => {
  fc.assert(
    fc.property(fc.array(input, { minLength: 1, maxLength: 20 }), (inputs) => {
      const hold = embeddingHold(inputs, model);
      const bytes = inputs.reduce((n, i) => n + (i.type === 'text' ? Buffer.byteLength(i.text) : i.tokens.length), 0);
      expect(hold.units).toBeGreaterThanOrEqual(charge(bytes));
      const sandbox = inputs.reduce((n, i) => n + embedInputTokens(i), 0);
      expect(hold.units).toBeGreaterThanOrEqual(charge(sandbox));
    }),
  );
});

test('the hold is the input bound at the input price, one unit up', () => {
  const hold = embeddingHold(
    [
      { type: 'text', text: 'héllo' },
      { type: 'tokens', tokens: [1, 2, 3] },
    ],
    model,
  );
  // 6 bytes + 3 ids + 1 per input.
  expect(hold.inputTokens).toBe(6 + 3 + 2);
  expect(hold.units).toBe(toUnits((11 * 0.13) / 1e6) + 1n);
});

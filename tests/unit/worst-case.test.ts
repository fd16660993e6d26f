import { expect, test } from 'bun:test';
import fc from 'fast-check';
import { toUnits } from '../../src/accounts/money.ts';
import { llmCost } from '../../src/llm/pricing.ts';
import { toolCallsHoldUsd, unpricedTool } from '../../src/llm/tool-call-hold.ts';
import { affordableOutputTokens, passthroughInputTokens, worstCaseHold } from '../../src/llm/worst-case.ts';
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

const cachedModel = {
  id: 'x/c',
  category: 'llm',
  max_output: 8192,
  pricing: { input_per_mtok: 3, output_per_mtok: 15, cache_read_per_mtok: 0.3, cache_write_per_mtok: 3.75 },
} as never;
const cachedPricing = (cachedModel as { pricing: never }).pricing;

test('cache reads and writes are priced at their own rates, the rest of the input at input_per_mtok', () => {
  // 1000 uncached × $3 + 2000 read × $0.30 + 500 written × $3.75 + 100 out × $15, per million.
  const cost = llmCost(cachedPricing, {
    inputTokens: 3500,
    cachedInputTokens: 2000,
    cacheWriteTokens: 500,
    outputTokens: 100,
    totalTokens: 3600,
  });
  expect(cost).toBeCloseTo((1000 * 3 + 2000 * 0.3 + 500 * 3.75 + 100 * 15) / 1e6, 12);
  // Unset cache prices default to input_per_mtok: caching changes nothing then.
  const plain = (model as { pricing: never }).pricing;
  expect(
    llmCost(plain, {
      inputTokens: 3500,
      cachedInputTokens: 2000,
      cacheWriteTokens: 500,
      outputTokens: 0,
      totalTokens: 0,
    }),
  ).toBe(llmCost(plain, { inputTokens: 3500, outputTokens: 0, totalTokens: 0 }));
});

test('with a cache-write price above the input price, the hold still covers any split of the input', () => {
  fc.assert(
    fc.property(
      fc.string({ unit: 'grapheme' }),
      fc.integer({ min: 1, max: 8192 }),
      fc.double({ min: 0, max: 1, noNaN: true }),
      fc.double({ min: 0, max: 1, noNaN: true }),
      (text, maxTokens, readShare, writeShare) => {
        const hold = worstCaseHold(request(text, maxTokens), cachedModel);
        const input = Buffer.byteLength(text);
        const read = Math.floor(input * readShare);
        const written = Math.floor((input - read) * writeShare);
        const worst = llmCost(cachedPricing, {
          inputTokens: input,
          cachedInputTokens: read,
          cacheWriteTokens: written,
          outputTokens: maxTokens,
          totalTokens: 0,
        });
        expect(hold.units).toBeGreaterThanOrEqual(toUnits(worst));
      },
    ),
  );
});

test('what a passed-through body sends beyond the canonical request is held: bytes, images, and files up to the context window', () => {
  const base = worstCaseHold(request('hi'), model).inputTokens;
  const none = { textTokens: 0, images: 0, files: 0 };
  expect(worstCaseHold(request('hi'), model, none).inputTokens).toBe(base);
  expect(passthroughInputTokens(request('hi'), { textTokens: 500, images: 2, files: 0 }, model)).toBe(
    base + 500 + 4_000,
  );
  // A file's pages cost more than its bytes: the whole context window is held, or 300,000 tokens a file without one.
  const windowed = { ...(model as object), context_length: 200_000 } as never;
  expect(passthroughInputTokens(request('hi'), { textTokens: 10, images: 0, files: 3 }, windowed)).toBe(200_000);
  expect(passthroughInputTokens(request('hi'), { textTokens: 10, images: 0, files: 3 }, model)).toBe(
    base + 10 + 900_000,
  );
  const held = worstCaseHold(request('hi', 100), windowed, { textTokens: 0, images: 0, files: 1 });
  expect(held).toMatchObject({ inputTokens: 200_000, outputTokens: 100 });
  expect(held.units).toBeGreaterThan(worstCaseHold(request('hi', 100), windowed).units);
});

test('built-in tool calls: charged at per_tool_call, held at the dearest tool for every call a response may make', () => {
  const priced = {
    ...(model as object),
    pricing: { input_per_mtok: 3, output_per_mtok: 15, per_tool_call: { web_search: 0.01, code_interpreter: 0.03 } },
  } as never;
  const usage = { inputTokens: 1_000_000, outputTokens: 0, totalTokens: 1_000_000 };
  expect(llmCost((priced as { pricing: never }).pricing, usage)).toBeCloseTo(3, 10);
  const withCalls = { ...usage, builtInToolCalls: { web_search: 3, code_interpreter: 1, mcp: 2 } };
  expect(llmCost((priced as { pricing: never }).pricing, withCalls)).toBeCloseTo(3 + 0.03 + 0.03, 10);
  const perCall = {
    tools: [
      { name: 'web_search', at: 'tools[0]' },
      { name: 'code_interpreter', at: 'tools[1]' },
    ],
    maxCalls: 10,
  };
  expect(toolCallsHoldUsd(perCall, priced)).toBeCloseTo(0.3, 10);
  expect(unpricedTool(perCall, priced)).toBeUndefined();
  expect(unpricedTool(perCall, model)).toEqual({ name: 'web_search', at: 'tools[0]' });
  const none = { textTokens: 0, images: 0, files: 0 };
  const bare = worstCaseHold(request('hi', 100), priced, none);
  const held = worstCaseHold(request('hi', 100), priced, { ...none, perCallTools: perCall });
  expect(held.toolCallsUsd).toBeCloseTo(0.3, 10);
  // 0.3 USD more, give or take the one unit each hold rounds up by.
  expect(Number(held.units - bare.units - toUnits(0.3))).toBeWithin(-1, 2);
  // The most any answer within the bound can cost is covered.
  const worst = llmCost((priced as { pricing: never }).pricing, {
    inputTokens: held.inputTokens,
    outputTokens: 100,
    totalTokens: 0,
    builtInToolCalls: { code_interpreter: 10 },
  });
  expect(held.units).toBeGreaterThanOrEqual(toUnits(worst));
  // The 402's max_tokens leaves room for the tool calls.
  const room = affordableOutputTokens(held.units - 1n, held, priced);
  expect(room).toBeLessThan(100);
});

test('usage an upstream reports below zero costs nothing, never a credit', () => {
  const pricing = { input_per_mtok: 3, output_per_mtok: 15 } as never;
  for (const usage of [
    { inputTokens: -1000, outputTokens: 0, totalTokens: 0 },
    { inputTokens: 0, outputTokens: -1000, totalTokens: 0 },
    { inputTokens: 10, outputTokens: -1e9, totalTokens: 0, cachedInputTokens: -5, cacheWriteTokens: -5 },
  ])
    expect(llmCost(pricing, usage)).toBeGreaterThanOrEqual(0);
  fc.assert(
    fc.property(fc.integer(), fc.integer(), (inputTokens, outputTokens) => {
      expect(llmCost(pricing, { inputTokens, outputTokens, totalTokens: 0 })).toBeGreaterThanOrEqual(0);
    }),
  );
});

test('a JSON schema the answer must follow is held as input, by its bytes', () => {
  const schema = {
    type: 'object',
    properties: Object.fromEntries(
      Array.from({ length: 200 }, (_, i) => [`field_${i}`, { type: 'string', description: 'x'.repeat(50) }]),
    ),
  };
  const plain = worstCaseHold(request('hi', 10), model);
  const shaped = worstCaseHold(
    { ...request('hi', 10), responseFormat: { type: 'json-schema', name: 's', schema } },
    model,
  );
  // It held nothing for the schema: a 14 KB schema's input was charged from nobody's hold.
  expect(shaped.inputTokens - plain.inputTokens).toBeGreaterThanOrEqual(Buffer.byteLength(JSON.stringify(schema)));
});

test('cache writes kept for an hour are priced at cache_write_1h_per_mtok, and held at it', () => {
  const pricing = {
    input_per_mtok: 3,
    cache_write_per_mtok: 3.75,
    cache_write_1h_per_mtok: 6,
    output_per_mtok: 15,
  } as never;
  // 1,000 input tokens of which 600 written to the cache, 400 of them for an hour.
  const usage = {
    inputTokens: 1000,
    outputTokens: 0,
    totalTokens: 1000,
    cacheWriteTokens: 600,
    cacheWrite1hTokens: 400,
  };
  expect(llmCost(pricing, usage)).toBeCloseTo((400 * 3 + 200 * 3.75 + 400 * 6) / 1e6, 12);
  // Without the 1-hour price, an hour's writes cost what other writes do (as before).
  const plain = { input_per_mtok: 3, cache_write_per_mtok: 3.75 } as never;
  expect(llmCost(plain, usage)).toBeCloseTo((400 * 3 + 600 * 3.75) / 1e6, 12);
  // Every input token may be an hour's cache write: the hold prices input at the highest.
  const hold = worstCaseHold(request('hi', 0), { id: 'x/y', category: 'llm', max_output: 10, pricing } as never);
  expect(Number(hold.units)).toBeGreaterThanOrEqual(Math.round(((hold.inputTokens * 6) / 1e6) * 1e10));
});

test('token counts no upstream could mean still price to a finite charge (capped by the settlement)', () => {
  const pricing = { input_per_mtok: 3, output_per_mtok: 15 } as never;
  const usd = llmCost(pricing, { inputTokens: 1e308, outputTokens: 1e308, totalTokens: 0 });
  expect(Number.isFinite(usd)).toBe(true);
  expect(() => toUnits(usd)).not.toThrow();
});

import { expect, test } from 'bun:test';
import {
  SANDBOX_EMBED_DIMENSIONS,
  embedInputTokens,
  sandboxEmbeddings,
  sandboxVector,
} from '../../providers/sandbox/embed-model.ts';
import { InvalidRequestError } from '../../translators/canonical/errors.ts';

const norm = (v: Float32Array) => Math.hypot(...v);
const model = { id: 'sandbox/embed', upstreamModel: 'embed' };
const signal = new AbortController().signal;

test('the same input gives the same unit-length vector in any batch; other inputs differ', async () => {
  const a = await sandboxEmbeddings.embed({
    request: { model: model.id, inputs: [{ type: 'text', text: 'red fox' }] },
    model,
    signal,
  });
  const b = await sandboxEmbeddings.embed({
    request: {
      model: model.id,
      inputs: [
        { type: 'text', text: 'blue owl' },
        { type: 'text', text: 'red fox' },
        { type: 'tokens', tokens: [1, 2] },
      ],
    },
    model,
    signal,
  });
  expect(a.response.vectors[0]).toHaveLength(SANDBOX_EMBED_DIMENSIONS);
  expect(b.response.vectors[1]).toEqual(a.response.vectors[0] as Float32Array);
  expect(b.response.vectors[0]).not.toEqual(a.response.vectors[0] as Float32Array);
  for (const v of b.response.vectors) expect(Math.abs(norm(v) - 1)).toBeLessThan(1e-6);
  // Whitespace tokens, as sandbox/echo counts them; token arrays count their ids.
  expect(a.response.inputTokens).toBe(2);
  expect(b.response.inputTokens).toBe(2 + 2 + 2);
});

test('dimensions: a renormalised prefix of the full vector; more than the model has is refused naming the field', async () => {
  const full = sandboxVector({ type: 'text', text: 'x y' }, SANDBOX_EMBED_DIMENSIONS);
  const short = sandboxVector({ type: 'text', text: 'x y' }, 8);
  expect(Math.abs(norm(short) - 1)).toBeLessThan(1e-6);
  const scale = (full[0] as number) / (short[0] as number);
  for (let i = 0; i < 8; i++) expect((full[i] as number) / (short[i] as number)).toBeCloseTo(scale, 5);
  const refused = sandboxEmbeddings.embed({
    request: { model: model.id, inputs: [{ type: 'text', text: 'x' }], dimensions: SANDBOX_EMBED_DIMENSIONS + 1 },
    model,
    signal,
  });
  await expect(refused).rejects.toBeInstanceOf(InvalidRequestError);
  await refused.catch((err: InvalidRequestError) => expect(err.param).toBe('dimensions'));
});

test('token counts', () => {
  expect(embedInputTokens({ type: 'text', text: '  one two\nthree ' })).toBe(3);
  expect(embedInputTokens({ type: 'tokens', tokens: [9, 9, 9, 9] })).toBe(4);
});

import { InvalidRequestError } from '../../translators/canonical/index.ts';
import type { EmbeddingInput } from '../../translators/embeddings/index.ts';
import type { EmbeddingAdapter } from '../types.ts';
import { countTokens } from './echo-model.ts';
import { hashString, prng } from './media/seed.ts';

/** Size of a `sandbox/embed` vector; `dimensions` may ask for fewer. */
export const SANDBOX_EMBED_DIMENSIONS = 256;

/** The input's tokens as the sandbox counts them: whitespace-separated words (as `sandbox/echo`), or the ids given. */
export const embedInputTokens = (input: EmbeddingInput): number =>
  input.type === 'text' ? countTokens(input.text) : input.tokens.length;

/**
 * The input's vector: uniform noise seeded by the input alone, cut to `dimensions` and scaled
 * to unit length — the same input gives the same vector in any batch, and a shorter vector is
 * the longer one's prefix, renormalised, as OpenAI's `dimensions` behaves.
 */
export function sandboxVector(input: EmbeddingInput, dimensions: number): Float32Array {
  const seed = hashString(input.type === 'text' ? `text:${input.text}` : `tokens:${input.tokens.join(',')}`);
  const next = prng(seed);
  const raw = Array.from({ length: dimensions }, () => next() * 2 - 1);
  const norm = Math.hypot(...raw) || 1;
  return Float32Array.from(raw, (x) => x / norm);
}

/** `sandbox/embed` (docs/api-contract.md): deterministic, offline, unit-length vectors. */
export const sandboxEmbeddings: EmbeddingAdapter = {
  async embed(call) {
    const dimensions = call.request.dimensions ?? SANDBOX_EMBED_DIMENSIONS;
    if (dimensions > SANDBOX_EMBED_DIMENSIONS)
      throw new InvalidRequestError(
        `dimensions: must be at most ${SANDBOX_EMBED_DIMENSIONS} for ${call.model.id}`,
        'dimensions',
      );
    const inputs = call.request.inputs;
    return {
      response: {
        vectors: inputs.map((input) => sandboxVector(input, dimensions)),
        inputTokens: inputs.reduce((sum, input) => sum + embedInputTokens(input), 0),
      },
      warnings: [],
    };
  },
};

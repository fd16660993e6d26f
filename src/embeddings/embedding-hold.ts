import type { EmbeddingInput } from '../../translators/embeddings/index.ts';
import type { ModelConfig } from '../config/gateway-config.ts';
import { estimateTokens } from '../llm/pricing.ts';
import { holdUnits } from '../llm/worst-case.ts';

/**
 * An upper bound on an embeddings call's input tokens without the model's tokenizer: a token
 * array is exactly its ids; a text at most its UTF-8 byte count (byte-level tokenizers spend at
 * least one byte per token), plus one per input for a start marker some models add.
 */
export function worstCaseEmbeddingTokens(inputs: EmbeddingInput[]): number {
  let tokens = 0;
  for (const input of inputs)
    tokens += 1 + (input.type === 'text' ? Buffer.byteLength(input.text) : input.tokens.length);
  return tokens;
}

/** What admission holds for an embeddings call: its input bound at the model's input price (docs/money.md). */
export function embeddingHold(inputs: EmbeddingInput[], model: ModelConfig): { units: bigint; inputTokens: number } {
  const inputTokens = worstCaseEmbeddingTokens(inputs);
  return { units: holdUnits(inputTokens, 0, model), inputTokens };
}

/**
 * The call's input tokens as a key's `tpm` counts them at admission: a text at four characters a
 * token, a token array its length; the upstream's count replaces it at settlement.
 */
export function estimateEmbeddingTokens(inputs: EmbeddingInput[]): number {
  let tokens = 0;
  for (const input of inputs) tokens += input.type === 'text' ? estimateTokens(input.text) : input.tokens.length;
  return tokens;
}

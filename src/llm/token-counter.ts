import type { CanonicalRequest } from '../../translators/canonical/index.ts';
import { worstCaseInputTokens } from './worst-case.ts';

/**
 * Counts input tokens on the gateway's side, for upstreams that cannot count them
 * (`POST /v1/messages/count_tokens` to a non-Anthropic model) and embeddings upstreams that report
 * no usage. One interface, one file: a tokenizer library plugs in here and nowhere else.
 */
export interface TokenCounter {
  /** A chat request's input tokens: messages, tool calls and results, tool definitions. */
  countRequest(request: CanonicalRequest): number;
  /** One text's tokens. */
  countText(text: string): number;
}

/**
 * No tokenizer library is installed yet, so this counter answers the admission bound the LLM path
 * already computes (src/llm/worst-case.ts): the UTF-8 byte count plus per-message and per-image
 * allowances. Byte-level BPE tokenizers spend at least one byte per token, so the figure never
 * falls short of the real count; for English text it is about four times too high.
 * Replace with a BPE library (`gpt-tokenizer`, o200k_base) to count exactly for OpenAI models.
 */
export const byteBoundCounter: TokenCounter = {
  countRequest: (request) => worstCaseInputTokens(request),
  countText: (text) => Buffer.byteLength(text),
};

export const defaultTokenCounter: TokenCounter = byteBoundCounter;

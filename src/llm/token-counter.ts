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
 * The byte bound the LLM path already holds against (src/llm/worst-case.ts): the UTF-8 byte count
 * plus per-message and per-image allowances. Byte-level BPE tokenizers spend at least one byte per
 * token, so it never falls short of a real count; for English text it is about four times high.
 */
export const byteBoundCounter: TokenCounter = {
  countRequest: (request) => worstCaseInputTokens(request),
  countText: (text) => Buffer.byteLength(text),
};

/** OpenAI's chat framing: each message costs 3 tokens around its content, a reply is primed with 3. */
const MESSAGE_TOKENS = 3;
const REPLY_TOKENS = 3;
/** A high-detail 512×512 image on OpenAI's vision models: 170 per tile × 4 + 85. */
const IMAGE_TOKENS = 765;
/** Text that looks like a special token (`<|endoftext|>`) is counted as the plain text it is. */
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

type Count = (text: string, options: typeof PLAIN_TEXT) => number;
let o200k: Count | undefined;
/** The o200k_base ranks are a few megabytes: loaded on the first count, not at start. */
function countO200k(text: string): number {
  o200k ??= (require('gpt-tokenizer/encoding/o200k_base') as { countTokens: Count }).countTokens;
  return text ? o200k(text, PLAIN_TEXT) : 0;
}

/**
 * Counts with OpenAI's o200k_base encoding (`gpt-tokenizer`, pure TypeScript): exact for current
 * OpenAI models' text, a close estimate for other providers' models, which tokenize differently.
 * @see https://github.com/openai/openai-cookbook/blob/main/examples/How_to_count_tokens_with_tiktoken.ipynb
 */
export const o200kCounter: TokenCounter = {
  countText: countO200k,
  countRequest(request) {
    let tokens = REPLY_TOKENS;
    for (const message of request.messages) {
      tokens += MESSAGE_TOKENS;
      for (const part of message.content) {
        if (part.type === 'text') tokens += countO200k(part.text);
        else if (part.type === 'image') tokens += IMAGE_TOKENS;
        else if (part.type === 'tool-call') tokens += countO200k(part.name) + countO200k(part.arguments);
        else if (part.type === 'reasoning') tokens += countO200k(part.text);
        else if (part.type === 'tool-result')
          for (const inner of part.content) tokens += inner.type === 'text' ? countO200k(inner.text) : IMAGE_TOKENS;
      }
    }
    if (request.tools?.length) tokens += countO200k(JSON.stringify(request.tools));
    return tokens;
  },
};

export const defaultTokenCounter: TokenCounter = o200kCounter;

import type { CanonicalRequest } from '../../translators/canonical/index.ts';
import type { UncountedInput } from '../../translators/passthrough/index.ts';
import { estimateTokens } from './pricing.ts';

/** An image, estimated: about what one of a megapixel costs on the vision models we know (765–1,600). */
const IMAGE_TOKENS = 1_000;
/** A file (a PDF), estimated: a page or two of text and its picture. The upstream's usage replaces it. */
const FILE_TOKENS = 3_000;

/**
 * The call's input tokens as a key's `tpm` counts them at admission, and as a stream cut short
 * before the upstream reported usage is charged: text at four characters a token (tool
 * definitions, calls and results included), images and files at a typical size, and what a
 * passed-through body sends beyond the canonical request. An estimate, not a bound: the hold
 * uses src/llm/worst-case.ts.
 */
export function estimateInputTokens(request: CanonicalRequest, uncounted?: UncountedInput): number {
  let tokens = 0;
  for (const message of request.messages)
    for (const part of message.content) {
      if (part.type === 'text' || part.type === 'reasoning') tokens += estimateTokens(part.text);
      else if (part.type === 'image') tokens += IMAGE_TOKENS;
      else if (part.type === 'tool-call') tokens += estimateTokens(part.arguments);
      else
        for (const inner of part.content) tokens += inner.type === 'text' ? estimateTokens(inner.text) : IMAGE_TOKENS;
    }
  if (request.tools?.length) tokens += estimateTokens(JSON.stringify(request.tools));
  if (request.responseFormat?.type === 'json-schema') tokens += estimateTokens(JSON.stringify(request.responseFormat));
  if (uncounted)
    // Its text allowance is in bytes, each bounding a token: a quarter of it, as for any text.
    tokens += Math.ceil(uncounted.textTokens / 4) + uncounted.images * IMAGE_TOKENS + uncounted.files * FILE_TOKENS;
  return tokens;
}

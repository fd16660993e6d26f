import type { Json } from '../common/validation.ts';
import { anthropicPassthroughRequest } from './anthropic-passthrough-request.ts';
import type { PassthroughRequest } from './uncounted-input.ts';

/**
 * The fields of a Messages body that count_tokens takes, besides `model` (the adapter's): what the
 * input is made of. Generation settings (`max_tokens`, `temperature`, `stream`…) change nothing it
 * counts, and Anthropic refuses them there.
 * @see https://docs.anthropic.com/en/api/messages-count-tokens
 */
const COUNTED = ['messages', 'system', 'tools', 'tool_choice', 'thinking', 'output_config', 'cache_control'] as const;

/**
 * A count_tokens body → the body for an Anthropic upstream's count_tokens: the client's own, as a
 * Messages body passes through (documents, Anthropic's tools and the rest counted as written; the
 * same refusals and withheld settings), with only the fields count_tokens takes.
 */
export function anthropicCountTokensRequest(body: Json): PassthroughRequest {
  const built = anthropicPassthroughRequest(body, []);
  const value: Json = {};
  for (const field of COUNTED) if (field in built.value) value[field] = built.value[field];
  return { ...built, value };
}

import type { CanonicalRequest } from '../canonical/request.ts';
import type { Translated } from '../canonical/warnings.ts';
import { requestObject } from '../common/request-fields.ts';
import { decodeAnthropicRequest } from './decode-request.ts';
import { encodeAnthropicRequest } from './encode-request.ts';
import type { AnthropicRequest } from './wire-types.ts';

/**
 * `POST /v1/messages/count_tokens`: the Messages request without its generation settings
 * (`MessageCountTokensParams` of `@anthropic-ai/sdk`), answered with `{input_tokens}`.
 * @see https://docs.anthropic.com/en/api/messages-count-tokens
 */
export type AnthropicCountTokensRequest = Pick<
  AnthropicRequest,
  'model' | 'messages' | 'system' | 'tools' | 'tool_choice' | 'output_config'
>;

/**
 * A count_tokens body → the canonical request. It is a Messages body without `max_tokens`, so it
 * is read by the Messages decoder (same validation, same field names in errors) with the
 * generation-only fields set aside: they do not change what the input counts.
 */
export function decodeAnthropicCountTokensRequest(body: unknown): Translated<CanonicalRequest> {
  const obj = requestObject(body);
  const { value, warnings } = decodeAnthropicRequest({ ...obj, max_tokens: 1, stream: false });
  const { maxTokens: _maxTokens, ...request } = value;
  return { value: request, warnings };
}

/** The canonical request → an Anthropic count_tokens body: the Messages body's input fields only. */
export function encodeAnthropicCountTokensRequest(
  request: CanonicalRequest,
  upstreamModel: string,
): Translated<AnthropicCountTokensRequest> {
  // max_tokens is set so the Messages encoder does not warn about a default nobody will send.
  const { value, warnings } = encodeAnthropicRequest({ ...request, maxTokens: 1, stream: false }, upstreamModel);
  const out: AnthropicCountTokensRequest = { model: value.model, messages: value.messages };
  if (value.system !== undefined) out.system = value.system;
  if (value.tools !== undefined) out.tools = value.tools;
  if (value.tool_choice !== undefined) out.tool_choice = value.tool_choice;
  if (value.output_config !== undefined) out.output_config = value.output_config;
  return { value: out, warnings };
}

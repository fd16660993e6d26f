export { decodeAnthropicRequest, ANTHROPIC_SCHEMA_NAME } from './decode-request.ts';
export { encodeAnthropicRequest, DEFAULT_MAX_TOKENS, JSON_MODE_INSTRUCTION } from './encode-request.ts';
export { decodeAnthropicResponse, type DecodeResponseOptions } from './decode-response.ts';
export { encodeAnthropicResponse } from './encode-response.ts';
export { createAnthropicStreamDecoder, type AnthropicStreamDecoderOptions } from './stream-decoder.ts';
export {
  anthropicErrorEvent,
  createAnthropicStreamEncoder,
  type AnthropicStreamEncoderOptions,
} from './stream-encoder.ts';
export { fromAnthropicStopReason, toAnthropicStopReason } from './finish-reason.ts';
export { fromAnthropicUsage, toAnthropicDeltaUsage, toAnthropicUsage } from './usage.ts';
export { anthropicMessageId } from './message-object.ts';
export type {
  AnthropicContentBlock,
  AnthropicDeltaUsage,
  AnthropicMessage,
  AnthropicRequest,
  AnthropicStopReason,
  AnthropicStreamErrorType,
  AnthropicToolChoice,
  AnthropicUsage,
} from './wire-types.ts';
export {
  decodeAnthropicCountTokensRequest,
  encodeAnthropicCountTokensRequest,
  type AnthropicCountTokensRequest,
} from './count-tokens.ts';

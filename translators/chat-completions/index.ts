export { decodeChatRequest, type DecodedChatRequest } from './decode-request.ts';
export { encodeChatRequest } from './encode-request.ts';
export { decodeChatResponse } from './decode-response.ts';
export { chatMessage, encodeChatResponse, type ChatEncodeOptions } from './encode-response.ts';
export { createChatStreamDecoder, type ChatStreamDecoderOptions } from './stream-decoder.ts';
export { chatErrorEvent, createChatStreamEncoder, type ChatStreamEncoderOptions } from './stream-encoder.ts';
export { fromChatFinishReason, toChatFinishReason } from './finish-reason.ts';
export { fromChatUsage, readChatUsage, toChatUsage } from './usage.ts';
export { MAX_STOP_SEQUENCES } from './request-schema.ts';
export type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionMessage,
  ChatContentPart,
  ChatDelta,
  ChatErrorObject,
  ChatFinishReason,
  ChatMessageParam,
  ChatRequest,
  ChatResponseFormat,
  ChatTool,
  ChatToolCall,
  ChatToolCallDelta,
  ChatToolChoice,
  ChatUsage,
} from './wire-types.ts';

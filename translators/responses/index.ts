export { decodeResponsesRequest, type DecodedResponsesRequest } from './decode-request.ts';
export { encodeResponsesRequest, type ResponsesInputItem, type ResponsesWireRequest } from './encode-request.ts';
export { decodeResponsesResponse } from './decode-response.ts';
export { encodeResponsesResponse } from './encode-response.ts';
export { createResponsesStreamDecoder } from './stream-decoder.ts';
export { createResponsesStreamEncoder, type ResponsesStreamEncoderOptions } from './stream-encoder.ts';
export { fromResponsesStatus, terminalEventType, toResponsesEnding, type ResponsesEnding } from './finish-reason.ts';
export { fromResponsesUsage, toResponsesUsage } from './usage.ts';
export { itemIdsFor, responseOutputItems } from './output-items.ts';
export { buildResponseObject, resolveEcho, type ResponsesEncodeContext } from './response-object.ts';
export { defaultEcho } from './wire-types.ts';
export type {
  ItemIdFn,
  ItemKind,
  ResponsesEcho,
  ResponsesErrorCode,
  ResponsesFunctionTool,
  ResponsesOutputItem,
  ResponsesResponseObject,
  ResponsesTextFormat,
  ResponsesToolChoice,
  ResponsesUsage,
} from './wire-types.ts';

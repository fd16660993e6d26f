export type {
  CanonicalEmbeddingRequest,
  CanonicalEmbeddingResponse,
  EmbeddingEncoding,
  EmbeddingInput,
} from './embedding-types.ts';
export { base64ToFloats, floatsToBase64 } from './base64-floats.ts';
export { decodeEmbeddingRequest, MAX_EMBEDDING_INPUTS, type DecodedEmbeddingRequest } from './decode-request.ts';
export { encodeEmbeddingResponse, type OpenAIEmbeddingResponse } from './encode-response.ts';
export { encodeEmbeddingRequest, type OpenAIEmbeddingRequest } from './encode-request.ts';
export { decodeEmbeddingResponse } from './decode-response.ts';

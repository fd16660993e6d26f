import { floatsToBase64 } from './base64-floats.ts';
import type { CanonicalEmbeddingResponse, EmbeddingEncoding } from './embedding-types.ts';

/** The OpenAI embeddings response object (`openai` SDK `CreateEmbeddingResponse`). */
export interface OpenAIEmbeddingResponse {
  object: 'list';
  data: Array<{ object: 'embedding'; index: number; embedding: number[] | string }>;
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}

/**
 * The canonical answer in OpenAI's shape, vectors as JSON numbers or base64 float32, naming the
 * gateway's model id; `inputTokens` is what the call is charged for.
 * @see https://platform.openai.com/docs/api-reference/embeddings/object
 */
export function encodeEmbeddingResponse(
  response: CanonicalEmbeddingResponse,
  model: string,
  encoding: EmbeddingEncoding,
  inputTokens: number,
): OpenAIEmbeddingResponse {
  return {
    object: 'list',
    data: response.vectors.map((vector, index) => ({
      object: 'embedding',
      index,
      embedding: encoding === 'base64' ? floatsToBase64(vector) : Array.from(vector),
    })),
    model,
    usage: { prompt_tokens: inputTokens, total_tokens: inputTokens },
  };
}

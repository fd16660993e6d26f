import type { CanonicalEmbeddingRequest } from './embedding-types.ts';

/** What an OpenAI-compatible `/embeddings` endpoint is sent. */
export interface OpenAIEmbeddingRequest {
  model: string;
  input: string[] | number[][];
  encoding_format: 'float';
  dimensions?: number;
  user?: string;
}

/**
 * The canonical request for an OpenAI-compatible upstream. Vectors are asked for as floats, the
 * one encoding every compatible server (vLLM, Ollama, llama.cpp…) implements; the gateway
 * re-encodes them for its client. A batch is all texts or all token arrays (the decoder refuses
 * a mix, as OpenAI does).
 * @see https://platform.openai.com/docs/api-reference/embeddings/create
 */
export function encodeEmbeddingRequest(
  request: CanonicalEmbeddingRequest,
  upstreamModel: string,
): OpenAIEmbeddingRequest {
  const texts = request.inputs.flatMap((i) => (i.type === 'text' ? [i.text] : []));
  const out: OpenAIEmbeddingRequest = {
    model: upstreamModel,
    input: texts.length ? texts : request.inputs.flatMap((i) => (i.type === 'tokens' ? [i.tokens] : [])),
    encoding_format: 'float',
  };
  if (request.dimensions !== undefined) out.dimensions = request.dimensions;
  if (request.user !== undefined) out.user = request.user;
  return out;
}

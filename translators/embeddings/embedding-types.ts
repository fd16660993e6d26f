/**
 * The canonical embeddings call, independent of wire format: what the route decodes a client's
 * body into and what a provider encodes for its upstream.
 */

/** One input to embed: text, or text already tokenized by the caller (token ids). */
export type EmbeddingInput = { type: 'text'; text: string } | { type: 'tokens'; tokens: number[] };

export interface CanonicalEmbeddingRequest {
  /** The gateway's model id. */
  model: string;
  /** At least one input; vectors come back in this order. */
  inputs: EmbeddingInput[];
  /** Shorter vectors, for models that can give them; unset → the model's own size. */
  dimensions?: number;
  /** End-user id, passed on to upstreams that take one. */
  user?: string;
}

export interface CanonicalEmbeddingResponse {
  /** One vector per input, in input order. */
  vectors: Float32Array[];
  /** Input tokens the upstream charged for; undefined when it did not say. */
  inputTokens?: number;
}

/** How vectors travel in a response body: JSON numbers, or base64 of little-endian float32. */
export type EmbeddingEncoding = 'float' | 'base64';

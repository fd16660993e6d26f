import { asNumber, asObject } from '../common/validation.ts';
import { base64ToFloats } from './base64-floats.ts';
import type { CanonicalEmbeddingResponse } from './embedding-types.ts';

/**
 * An OpenAI-compatible `/embeddings` answer → canonical vectors in input order (by `index`, which
 * servers may return out of order), each a float array or base64 float32. `usage.prompt_tokens`
 * is the charge; servers that omit usage leave `inputTokens` undefined.
 * Throws (an Error saying why) when the body is not such an answer for `count` inputs.
 * @see https://platform.openai.com/docs/api-reference/embeddings/object
 */
export function decodeEmbeddingResponse(body: unknown, count: number): CanonicalEmbeddingResponse {
  const data = asObject(body)?.data;
  if (!Array.isArray(data) || data.length !== count)
    throw new Error(
      `invalid upstream embeddings: expected ${count} embeddings in data, got ${Array.isArray(data) ? data.length : 'none'}`,
    );
  const vectors: Float32Array[] = new Array(count);
  data.forEach((item, position) => {
    const obj = asObject(item);
    const index = asNumber(obj?.index) ?? position;
    const raw = obj?.embedding;
    const vector =
      typeof raw === 'string'
        ? base64ToFloats(raw)
        : Array.isArray(raw) && raw.every((x) => typeof x === 'number' && Number.isFinite(x))
          ? Float32Array.from(raw as number[])
          : undefined;
    if (!vector || !Number.isInteger(index) || index < 0 || index >= count || vectors[index])
      throw new Error(`invalid upstream embeddings: data[${position}] is not an embedding of this request`);
    vectors[index] = vector;
  });
  const usage = asObject(asObject(body)?.usage);
  const tokens = asNumber(usage?.prompt_tokens) ?? asNumber(usage?.total_tokens);
  return { vectors, inputTokens: tokens !== undefined && tokens >= 0 ? Math.ceil(tokens) : undefined };
}

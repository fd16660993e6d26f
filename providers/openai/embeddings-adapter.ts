import type { ProviderConfig } from '../config/config-schema.ts';
import { decodeEmbeddingResponse, encodeEmbeddingRequest } from '../../translators/embeddings/index.ts';
import type { EmbeddingAdapter } from '../types.ts';
import { baseUrl, retryPolicy } from '../common/provider-options.ts';
import { UpstreamError } from '../common/upstream-error.ts';
import { postJson } from '../common/upstream-fetch.ts';
import { readUpstreamText } from '../common/upstream-body.ts';

/**
 * Embeddings on any OpenAI-compatible upstream: `POST {base_url}/embeddings`, vectors asked for
 * as floats (see encodeEmbeddingRequest) and re-encoded by the gateway for its client.
 * @see https://platform.openai.com/docs/api-reference/embeddings/create
 */
export function createEmbeddingsAdapter(config: ProviderConfig): EmbeddingAdapter {
  const url = `${baseUrl(config, 'https://api.openai.com/v1')}/embeddings`;
  const headers: Record<string, string> = config.api_key ? { authorization: `Bearer ${config.api_key}` } : {};
  const policy = retryPolicy(config);
  return {
    async embed(call) {
      const body = encodeEmbeddingRequest(call.request, call.model.upstreamModel);
      const res = await postJson(url, body, headers, policy, call.signal);
      const text = await readUpstreamText(res);
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined; // decodeEmbeddingResponse says what is missing
      }
      try {
        return { response: decodeEmbeddingResponse(json, call.request.inputs.length), warnings: [] };
      } catch (err) {
        // A 200 that is not an answer to this request is the upstream's failure, not the client's.
        throw new UpstreamError('server_error', (err as Error).message, res.status);
      }
    },
  };
}

import type { ProviderConfig } from '../config/config-schema.ts';
import type { TranslationWarning } from '../../translators/canonical/index.ts';
import { decodeResponsesResponse, encodeResponsesRequest } from '../../translators/responses/index.ts';
import { asObject } from '../../translators/common/validation.ts';
import type { LlmAdapter, LlmCall } from '../types.ts';
import { baseUrl, retryPolicy } from '../common/provider-options.ts';
import { postJson } from '../common/upstream-fetch.ts';
import { UpstreamError } from '../common/upstream-error.ts';
import { eventStreamBody, readUpstreamText } from '../common/upstream-body.ts';

/**
 * An upstream that speaks the OpenAI Responses API (`POST {base_url}/responses`, bearer key).
 * Chat-completions and Messages clients are translated through the canonical request; a
 * Responses client's own body is sent as it is (`call.wire`: model renamed, conversation state
 * kept by the gateway), and the answer comes back in the same words. The upstream never stores
 * anything: every request says `store: false` (docs/architecture.md).
 * @see https://platform.openai.com/docs/api-reference/responses/create
 */
export function createResponsesAdapter(config: ProviderConfig): LlmAdapter {
  const url = `${baseUrl(config, 'https://api.openai.com/v1')}/responses`;
  const headers: Record<string, string> = config.api_key ? { authorization: `Bearer ${config.api_key}` } : {};
  const policy = retryPolicy(config);

  const body = (call: LlmCall, stream: boolean): { value: unknown; warnings: TranslationWarning[] } => {
    if (call.wire?.format === 'responses')
      return { value: { ...call.wire.body, model: call.model.upstreamModel, stream }, warnings: [] };
    return encodeResponsesRequest({ ...call.request, stream }, call.model.upstreamModel);
  };
  const send = (call: LlmCall, stream: boolean) => {
    const { value, warnings } = body(call, stream);
    return { response: postJson(url, value, headers, policy, call.signal, call.onAttempt), warnings };
  };

  return {
    passthroughFormat: 'responses',
    async generate(call) {
      const { response, warnings } = send(call, false);
      const json: unknown = JSON.parse(await readUpstreamText(await response));
      const decoded = decodeResponsesResponse(json, call.model.id);
      const passedThrough = call.wire?.format === 'responses';
      // A failed response is the upstream's error for a client of another format, never an
      // answer that ends "stop"; a Responses client gets the response object as it is.
      if (!passedThrough && decoded.finishReason.unified === 'error') throw failedResponse(json);
      const wire = passedThrough ? asObject(json) : undefined;
      return wire ? { response: decoded, warnings, wire } : { response: decoded, warnings };
    },
    async stream(call) {
      const { response, warnings } = send(call, true);
      const body = await eventStreamBody(await response);
      return { kind: 'wire', format: 'responses', body, warnings };
    },
  };
}

/** A `status: "failed"` response body as the upstream error it is (502), with its `error.message`. */
function failedResponse(json: unknown): UpstreamError {
  const error = asObject(asObject(json)?.error);
  const message = typeof error?.message === 'string' ? error.message : 'no reason given';
  return new UpstreamError('server_error', `the upstream response failed: ${message}`, 200);
}

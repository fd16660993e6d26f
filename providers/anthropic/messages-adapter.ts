import type { ProviderConfig } from '../config/config-schema.ts';
import {
  decodeAnthropicResponse,
  encodeAnthropicCountTokensRequest,
  encodeAnthropicRequest,
} from '../../translators/anthropic-messages/index.ts';
import type { TranslationWarning } from '../../translators/canonical/index.ts';
import { asNumber, asObject } from '../../translators/common/validation.ts';
import { UpstreamError } from '../common/upstream-error.ts';
import type { LlmAdapter, LlmCall } from '../types.ts';
import { baseUrl, retryPolicy } from '../common/provider-options.ts';
import { postJson } from '../common/upstream-fetch.ts';
import { eventStreamBody, readUpstreamText } from '../common/upstream-body.ts';

/** @see https://docs.anthropic.com/en/api/versioning */
const ANTHROPIC_VERSION = '2023-06-01';

/**
 * The Anthropic Messages API upstream (`x-api-key`, `anthropic-version`). `base_url` is the API
 * root including `/v1`, like the OpenAI adapter's, so configs read the same. A Messages client's
 * body is sent as it is (model renamed); other clients' requests are encoded.
 * @see https://docs.anthropic.com/en/api/messages
 */
export function createMessagesAdapter(config: ProviderConfig): LlmAdapter {
  const url = `${baseUrl(config, 'https://api.anthropic.com/v1')}/messages`;
  const headers: Record<string, string> = {
    'anthropic-version': ANTHROPIC_VERSION,
    ...(config.api_key ? { 'x-api-key': config.api_key } : {}),
  };
  const policy = retryPolicy(config);

  /** The client's betas (`call.headers`) beside the gateway's own; ours win a clash. */
  const headersFor = (call: LlmCall) => (call.headers ? { ...call.headers, ...headers } : headers);
  /** A Messages client's own body (`call.wire`) with the upstream's model; any other is encoded. */
  const body = (call: LlmCall, stream: boolean): { value: unknown; warnings: TranslationWarning[] } =>
    call.wire?.format === 'anthropic-messages'
      ? { value: { ...call.wire.body, model: call.model.upstreamModel, stream }, warnings: [] }
      : encodeAnthropicRequest({ ...call.request, stream }, call.model.upstreamModel);
  const send = (call: LlmCall, stream: boolean) => {
    const { value, warnings } = body(call, stream);
    return { response: postJson(url, value, headersFor(call), policy, call.signal, call.onAttempt), warnings };
  };

  return {
    passthroughFormat: 'anthropic-messages',
    // A Messages client's betas (`anthropic-beta`, e.g. a 1M-token context, interleaved thinking)
    // are the upstream's to honour. @see https://docs.anthropic.com/en/api/beta-headers
    forwardedHeaders: { format: 'anthropic-messages', names: ['anthropic-beta'] },
    async generate(call) {
      const { response, warnings } = send(call, false);
      const text = await readUpstreamText(await response);
      const decoded = decodeAnthropicResponse(JSON.parse(text), call.model.id);
      return { response: decoded, warnings, raw: { format: 'anthropic-messages', text } };
    },
    async stream(call) {
      const { response, warnings } = send(call, true);
      const body = await eventStreamBody(await response);
      return { kind: 'wire', format: 'anthropic-messages', body, warnings };
    },
    /** @see https://docs.anthropic.com/en/api/messages-count-tokens */
    async countTokens(call) {
      // A Messages client's own count_tokens body (`call.wire`), or the canonical request encoded.
      const { value, warnings } =
        call.wire?.format === 'anthropic-messages'
          ? { value: { ...call.wire.body, model: call.model.upstreamModel }, warnings: [] }
          : encodeAnthropicCountTokensRequest(call.request, call.model.upstreamModel);
      const res = await postJson(`${url}/count_tokens`, value, headersFor(call), policy, call.signal);
      const body: unknown = await readUpstreamText(res)
        .then(JSON.parse)
        .catch(() => undefined);
      const tokens = asNumber(asObject(body)?.input_tokens);
      if (tokens === undefined || tokens < 0 || !Number.isInteger(tokens))
        throw new UpstreamError('server_error', 'upstream count_tokens answer has no input_tokens', res.status);
      return { inputTokens: tokens, warnings };
    },
  };
}

import type { ProviderConfig } from '../config/config-schema.ts';
import { decodeChatResponse, encodeChatRequest } from '../../translators/chat-completions/index.ts';
import type { TranslationWarning } from '../../translators/canonical/index.ts';
import { asObject } from '../../translators/common/validation.ts';
import type { LlmAdapter, LlmCall } from '../types.ts';
import { baseUrl, retryPolicy } from '../common/provider-options.ts';
import { postJson } from '../common/upstream-fetch.ts';
import { eventStreamBody, readUpstreamText } from '../common/upstream-body.ts';
import { UpstreamError } from '../common/upstream-error.ts';

/**
 * An upstream's refusal of `stream_options` ("Unrecognized request argument supplied:
 * stream_options", "Unknown parameter: 'stream_options'", "Argument not supported:
 * stream_options": some Azure API versions and OpenAI-compatible vendors).
 */
const refusesStreamOptions = (err: unknown) =>
  err instanceof UpstreamError && err.kind === 'bad_request' && /stream_options/.test(err.message);

/**
 * A chat client's own body for this upstream (`LlmCall.wire`): the upstream's model, and a stream
 * asks for its usage (so it is billed from real usage) beside the client's own stream options.
 * A call that does not stream sends none: they mean nothing there, and OpenAI refuses them.
 */
function ownBody(body: Record<string, unknown>, upstreamModel: string, stream: boolean): Record<string, unknown> {
  const { stream_options: options, ...rest } = body;
  const value: Record<string, unknown> = { ...rest, model: upstreamModel, stream };
  if (stream) value.stream_options = { ...asObject(options), include_usage: true };
  return value;
}

/**
 * Any OpenAI-compatible chat-completions upstream (OpenAI, vLLM, Ollama, llama.cpp server, Groq,
 * Together…). A chat client's body is sent as it is (model renamed); other clients' requests are
 * encoded. Streams are returned as raw bytes in the chat-completions format. The encoder asks
 * for `stream_options.include_usage`, so usage is not missing; an upstream that refuses the field
 * is asked again without it, and from then on this provider's streams go without it (their usage
 * is then what the upstream sends of its own accord, else estimated from the stream).
 * @see https://platform.openai.com/docs/api-reference/chat/create
 */
export function createChatAdapter(config: ProviderConfig): LlmAdapter {
  const url = `${baseUrl(config, 'https://api.openai.com/v1')}/chat/completions`;
  const headers: Record<string, string> = config.api_key ? { authorization: `Bearer ${config.api_key}` } : {};
  const policy = retryPolicy(config);
  /** Whether this provider takes `stream_options`; learnt from its first refusal. */
  let streamOptions = true;

  const body = (
    call: LlmCall,
    stream: boolean,
  ): { value: { stream_options?: unknown }; warnings: TranslationWarning[] } =>
    call.wire?.format === 'chat-completions'
      ? { value: ownBody(call.wire.body, call.model.upstreamModel, stream), warnings: [] }
      : encodeChatRequest({ ...call.request, stream }, call.model.upstreamModel);
  const send = (call: LlmCall, stream: boolean) => {
    const { value, warnings } = body(call, stream);
    if (stream && !streamOptions) delete value.stream_options;
    return { response: postJson(url, value, headers, policy, call.signal, call.onAttempt), warnings };
  };
  const startStream = async (call: LlmCall) => {
    const { response, warnings } = send(call, true);
    return { body: await eventStreamBody(await response), warnings };
  };

  return {
    passthroughFormat: 'chat-completions',
    async generate(call) {
      const { response, warnings } = send(call, false);
      const text = await readUpstreamText(await response);
      const decoded = decodeChatResponse(JSON.parse(text), call.model.id);
      return { response: decoded, warnings, raw: { format: 'chat-completions', text } };
    },
    async stream(call) {
      let started: Awaited<ReturnType<typeof startStream>>;
      try {
        started = await startStream(call);
      } catch (err) {
        if (!streamOptions || !refusesStreamOptions(err)) throw err;
        streamOptions = false;
        started = await startStream(call);
      }
      return { kind: 'wire', format: 'chat-completions', body: started.body, warnings: started.warnings };
    },
  };
}

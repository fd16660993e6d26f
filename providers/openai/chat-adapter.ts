import type { ProviderConfig } from '../config/config-schema.ts';
import { decodeChatResponse, encodeChatRequest } from '../../translators/chat-completions/index.ts';
import type { LlmAdapter, LlmCall } from '../types.ts';
import { baseUrl, retryPolicy } from '../shared/provider-options.ts';
import { postJson } from '../shared/upstream-fetch.ts';
import { eventStreamBody, readUpstreamText } from '../shared/upstream-body.ts';

/**
 * Any OpenAI-compatible chat-completions upstream (OpenAI, vLLM, Ollama, llama.cpp server, Groq,
 * Together…). Streams are returned as raw bytes in the chat-completions format; the encoder
 * always asks for `stream_options.include_usage`, so usage is never missing.
 * @see https://platform.openai.com/docs/api-reference/chat/create
 */
export function createChatAdapter(config: ProviderConfig): LlmAdapter {
  const url = `${baseUrl(config, 'https://api.openai.com/v1')}/chat/completions`;
  const headers: Record<string, string> = config.api_key ? { authorization: `Bearer ${config.api_key}` } : {};
  const policy = retryPolicy(config);

  const send = (call: LlmCall, stream: boolean) => {
    const { value, warnings } = encodeChatRequest({ ...call.request, stream }, call.model.upstreamModel);
    return { response: postJson(url, value, headers, policy, call.signal, call.onAttempt), warnings };
  };

  return {
    async generate(call) {
      const { response, warnings } = send(call, false);
      const text = await readUpstreamText(await response);
      const decoded = decodeChatResponse(JSON.parse(text), call.model.id);
      return { response: decoded, warnings, raw: { format: 'chat-completions', text } };
    },
    async stream(call) {
      const { response, warnings } = send(call, true);
      const body = await eventStreamBody(await response);
      return { kind: 'wire', format: 'chat-completions', body, warnings };
    },
  };
}

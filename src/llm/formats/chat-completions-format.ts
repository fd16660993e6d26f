import {
  createChatStreamEncoder,
  decodeChatRequest,
  encodeChatResponse,
} from '../../../translators/chat-completions/index.ts';
import { chatPassthrough, chatPassthroughRequest } from '../../../translators/passthrough/index.ts';
import type { ClientFormat } from '../client-format.ts';

/**
 * `POST /v1/chat/completions`. An OpenAI-compatible upstream gets the client's own body
 * (chat-passthrough-request.ts) and answers straight through; any other is translated. The
 * trailing usage chunk goes out only when the client asked for it.
 * @see https://platform.openai.com/docs/api-reference/chat/create
 */
export const chatCompletionsFormat: ClientFormat = {
  name: 'chat-completions',
  family: 'openai',
  idPrefix: 'chatcmpl-',
  passthrough: { format: 'chat-completions', rules: chatPassthrough, request: chatPassthroughRequest },
  decode(body) {
    const { value, warnings } = decodeChatRequest(body);
    return { request: value.request, warnings, includeUsage: value.includeUsage };
  },
  encodeResponse: (response, ctx) =>
    encodeChatResponse(response, { id: ctx.id, model: ctx.model, created: ctx.created }),
  encoder: (ctx) =>
    createChatStreamEncoder({
      id: ctx.id,
      model: ctx.model,
      created: ctx.created,
      includeUsage: ctx.decoded.includeUsage,
    }),
};

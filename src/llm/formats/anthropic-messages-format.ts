import {
  createAnthropicStreamEncoder,
  decodeAnthropicRequest,
  encodeAnthropicResponse,
} from '../../../translators/anthropic-messages/index.ts';
import {
  anthropicCanonicalView,
  anthropicPassthrough,
  anthropicPassthroughRequest,
} from '../../../translators/passthrough/index.ts';
import type { ClientFormat } from '../client-format.ts';

/**
 * `POST /v1/messages`. An Anthropic upstream gets the client's own body
 * (anthropic-passthrough-request.ts) and answers straight through; any other is translated.
 * @see https://docs.anthropic.com/en/api/messages
 */
export const anthropicMessagesFormat: ClientFormat = {
  name: 'anthropic-messages',
  family: 'anthropic',
  idPrefix: 'msg_',
  passthrough: {
    format: 'anthropic-messages',
    rules: anthropicPassthrough,
    request: anthropicPassthroughRequest,
    view: anthropicCanonicalView,
  },
  decode(body) {
    const { value, warnings } = decodeAnthropicRequest(body);
    // Anthropic streams always carry usage; there is no opt-in to honour.
    return { request: value, warnings, includeUsage: true };
  },
  encodeResponse: (response, ctx) => encodeAnthropicResponse({ ...response, id: ctx.id, model: ctx.model }),
  encoder: (ctx) => createAnthropicStreamEncoder({ id: ctx.id, model: ctx.model }),
};

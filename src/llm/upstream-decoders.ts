import type { StreamEvent } from '../../translators/canonical/index.ts';
import { createAnthropicStreamDecoder } from '../../translators/anthropic-messages/index.ts';
import { createChatStreamDecoder } from '../../translators/chat-completions/index.ts';
import { createResponsesStreamDecoder } from '../../translators/responses/index.ts';
import type { EventSourceMessage } from '../../translators/common/sse.ts';
import type { StreamTranslator } from '../../translators/common/stream-translator.ts';
import type { UpstreamStreamFormat } from '../../providers/types.ts';

/** Upstream wire stream → canonical events. */
export function upstreamDecoder(
  format: UpstreamStreamFormat,
  model: string,
  /** The client gets this stream as it is (same format): see `failedIsAnswer`. */
  passedThrough = false,
): StreamTranslator<EventSourceMessage, StreamEvent> {
  switch (format) {
    case 'chat-completions':
      return createChatStreamDecoder({ model });
    case 'anthropic-messages':
      return createAnthropicStreamDecoder({ model });
    case 'responses':
      return createResponsesStreamDecoder({ model, failedIsAnswer: passedThrough });
    default: {
      const exhaustive: never = format;
      throw new Error(`no decoder for ${exhaustive}`);
    }
  }
}

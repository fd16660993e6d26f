import type { StreamEvent } from '../../translators/canonical/index.ts';
import { anthropicStreamDecoderTransformer } from '../../translators/anthropic-messages/index.ts';
import { chatStreamDecoderTransformer } from '../../translators/chat-completions/index.ts';
import type { EventSourceMessage } from '../../translators/shared/sse.ts';
import type { UpstreamStreamFormat } from '../../providers/types.ts';

/** Upstream wire stream → canonical events. */
export function upstreamDecoder(format: UpstreamStreamFormat, model: string): Transformer<EventSourceMessage, StreamEvent> {
  switch (format) {
    case 'chat-completions':
      return chatStreamDecoderTransformer({ model });
    case 'anthropic-messages':
      return anthropicStreamDecoderTransformer({ model });
    default: {
      const exhaustive: never = format;
      throw new Error(`no decoder for ${exhaustive}`);
    }
  }
}

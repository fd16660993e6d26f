import type { CanonicalResponse } from '../canonical/response.ts';
import { toAnthropicStopReason } from './finish-reason.ts';
import { anthropicMessageId, buildAnthropicMessage, inputObject } from './message-object.ts';
import { toAnthropicUsage } from './usage.ts';
import type { AnthropicContentBlock, AnthropicMessage } from './wire-types.ts';

/**
 * A finished canonical response → the Message the client receives. `model` is `res.model` (the
 * gateway's id); tool arguments become `input` objects; `stop_sequence` is set only for a
 * stop-sequence ending.
 */
export function encodeAnthropicResponse(res: CanonicalResponse): AnthropicMessage {
  const content = res.content.map((part): AnthropicContentBlock => {
    switch (part.type) {
      case 'text':
        return { type: 'text', text: part.text, citations: null };
      case 'tool-call':
        return {
          type: 'tool_use',
          id: part.id,
          name: part.name,
          input: inputObject(part.arguments),
          caller: { type: 'direct' },
        };
      case 'reasoning':
        return part.redacted !== undefined
          ? { type: 'redacted_thinking', data: part.redacted }
          : { type: 'thinking', thinking: part.text, signature: part.signature ?? '' };
      default: {
        const exhaustive: never = part;
        throw new Error(`unknown content part ${JSON.stringify(exhaustive)}`);
      }
    }
  });
  const stopReason = toAnthropicStopReason(res.finishReason);
  return buildAnthropicMessage({
    id: anthropicMessageId(res.id),
    model: res.model,
    content,
    stopReason,
    stopSequence: stopReason === 'stop_sequence' ? (res.stopSequence ?? null) : null,
    usage: toAnthropicUsage(res.usage),
  });
}

import type { AssistantContentPart } from '../canonical/request.ts';
import type { CanonicalResponse } from '../canonical/response.ts';
import { mintId } from '../common/ids.ts';
import { fromAnthropicStopReason } from './finish-reason.ts';
import { fromAnthropicUsage } from './usage.ts';
import { asObject, asString } from '../common/validation.ts';

export interface DecodeResponseOptions {
  /** Unix seconds; Anthropic messages carry no timestamp. Defaults to now. */
  created?: number;
}

/**
 * Content blocks → canonical parts: text, tool_use, thinking (with its signature) and
 * redacted_thinking (its data); server-tool and other blocks are skipped.
 */
function decodeContent(content: unknown): AssistantContentPart[] {
  if (!Array.isArray(content)) throw new Error('invalid upstream Anthropic body: content is not an array');
  const parts: AssistantContentPart[] = [];
  content.forEach((raw, i) => {
    const block = asObject(raw);
    if (block?.type === 'text') {
      parts.push({ type: 'text', text: asString(block.text) ?? '' });
    } else if (block?.type === 'tool_use') {
      const id = asString(block.id);
      const name = asString(block.name);
      if (!id || !name) throw new Error(`invalid upstream Anthropic body: content[${i}] tool_use without id or name`);
      parts.push({ type: 'tool-call', id, name, arguments: JSON.stringify(block.input ?? {}) });
    } else if (block?.type === 'thinking') {
      const part: AssistantContentPart = { type: 'reasoning', text: asString(block.thinking) ?? '' };
      const signature = asString(block.signature);
      parts.push(signature === undefined ? part : { ...part, signature });
    } else if (block?.type === 'redacted_thinking') {
      parts.push({ type: 'reasoning', text: '', redacted: asString(block.data) ?? '' });
    }
  });
  return parts;
}

/** An upstream's non-stream Message → the canonical response (model = the gateway's id). */
export function decodeAnthropicResponse(
  body: unknown,
  gatewayModel: string,
  opts: DecodeResponseOptions = {},
): CanonicalResponse {
  const message = asObject(body);
  if (!message) throw new Error('invalid upstream Anthropic body: not a JSON object');
  if (message.type === 'error') {
    const error = asObject(message.error);
    throw new Error(`upstream error: ${asString(error?.message) ?? asString(error?.type) ?? 'unknown'}`);
  }
  const stopReason = asString(message.stop_reason);
  const response: CanonicalResponse = {
    id: asString(message.id) || mintId('msg_'),
    model: gatewayModel,
    created: opts.created ?? Math.floor(Date.now() / 1000),
    content: decodeContent(message.content),
    finishReason: fromAnthropicStopReason(stopReason),
    usage: fromAnthropicUsage(message.usage),
  };
  const stopSequence = asString(message.stop_sequence);
  if (stopSequence !== undefined) response.stopSequence = stopSequence;
  return response;
}

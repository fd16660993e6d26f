import { mintId } from '../common/ids.ts';
import type { AnthropicContentBlock, AnthropicMessage, AnthropicStopReason, AnthropicUsage } from './wire-types.ts';

/** Anthropic message ids start with `msg_`; other ids are replaced by a fresh one. */
export function anthropicMessageId(id: string): string {
  return id.startsWith('msg_') ? id : mintId('msg_');
}

export interface MessageFields {
  id: string;
  model: string;
  content: AnthropicContentBlock[];
  stopReason: AnthropicStopReason | null;
  stopSequence: string | null;
  usage: AnthropicUsage;
}

/**
 * A Message object in the API's field order, with every field `@anthropic-ai/sdk` types as
 * required (`stop_details`, `container`, `diagnostics` are null: the gateway has none).
 * Used for the non-stream body and for `message_start` (empty content, null stop reason).
 */
export function buildAnthropicMessage(fields: MessageFields): AnthropicMessage {
  return {
    id: fields.id,
    type: 'message',
    role: 'assistant',
    model: fields.model,
    content: fields.content,
    stop_reason: fields.stopReason,
    stop_sequence: fields.stopSequence,
    stop_details: null,
    container: null,
    diagnostics: null,
    usage: fields.usage,
  };
}

/** Tool arguments as text → the `input` object of a tool_use block (non-objects become `{}`). */
export function inputObject(argumentsText: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(argumentsText);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

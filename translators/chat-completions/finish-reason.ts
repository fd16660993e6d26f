import type { FinishReason } from '../canonical/finish-reason.ts';
import type { ChatFinishReason } from './wire-types.ts';

/**
 * Chat's `finish_reason` → canonical. The legacy `function_call` is a tool-call ending; anything
 * unknown (or no reason at all) reads `other`, with the upstream's word kept in `raw`.
 * @see https://platform.openai.com/docs/api-reference/chat/object#chat/object-choices
 */
export function fromChatFinishReason(raw: string | null | undefined): FinishReason {
  switch (raw) {
    case 'stop':
      return { unified: 'stop', raw };
    case 'length':
      return { unified: 'length', raw };
    case 'tool_calls':
    case 'function_call':
      return { unified: 'tool-calls', raw };
    case 'content_filter':
      return { unified: 'content-filter', raw };
    default:
      return { unified: 'other', raw: raw ?? undefined };
  }
}

/**
 * A canonical finish → chat's `finish_reason`. Chat has no word for a stop sequence, an error or
 * an unknown ending: all three read `stop`.
 */
export function toChatFinishReason(finish: FinishReason): ChatFinishReason {
  const unified = finish.unified;
  switch (unified) {
    case 'length':
      return 'length';
    case 'tool-calls':
      return 'tool_calls';
    case 'content-filter':
      return 'content_filter';
    case 'stop':
    case 'stop-sequence':
    case 'error':
    case 'other':
      return 'stop';
    default: {
      const exhaustive: never = unified;
      throw new Error(`unknown finish reason ${String(exhaustive)}`);
    }
  }
}

import type { FinishReason } from '../canonical/finish-reason.ts';
import { ANTHROPIC_STOP_REASONS, type AnthropicStopReason } from './wire-types.ts';

/**
 * Anthropic's `stop_reason` → canonical. Running out of context window is a `length` ending and a
 * refusal a `content-filter` one; `pause_turn` and anything unknown read `other`.
 * @see https://docs.anthropic.com/en/api/handling-stop-reasons
 */
export function fromAnthropicStopReason(raw: string | null | undefined): FinishReason {
  switch (raw) {
    case 'end_turn':
      return { unified: 'stop', raw };
    case 'stop_sequence':
      return { unified: 'stop-sequence', raw };
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return { unified: 'length', raw };
    case 'tool_use':
      return { unified: 'tool-calls', raw };
    case 'refusal':
      return { unified: 'content-filter', raw };
    default:
      return { unified: 'other', raw: raw ?? undefined };
  }
}

/**
 * A canonical finish → Anthropic's `stop_reason`. When the upstream was Anthropic itself and its
 * raw reason maps back to the same unified reason (`pause_turn`, `model_context_window_exceeded`),
 * the raw reason is kept so nothing is lost in a round trip. An error or an unknown ending reads
 * `end_turn`.
 */
export function toAnthropicStopReason(finish: FinishReason): AnthropicStopReason {
  const { unified, raw } = finish;
  if (raw !== undefined && ANTHROPIC_STOP_REASONS.has(raw) && fromAnthropicStopReason(raw).unified === unified) {
    return raw as AnthropicStopReason;
  }
  switch (unified) {
    case 'stop-sequence':
      return 'stop_sequence';
    case 'length':
      return 'max_tokens';
    case 'tool-calls':
      return 'tool_use';
    case 'content-filter':
      return 'refusal';
    case 'stop':
    case 'error':
    case 'other':
      return 'end_turn';
    default: {
      const exhaustive: never = unified;
      throw new Error(`unknown finish reason ${String(exhaustive)}`);
    }
  }
}

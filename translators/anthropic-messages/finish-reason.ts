import { FINISH_REASON_TABLE, fromAnthropicStopReason, type FinishReason } from '../canonical/finish-reason.ts';
import { ANTHROPIC_STOP_REASONS, type AnthropicStopReason } from './wire-types.ts';

export { fromAnthropicStopReason };

/**
 * A canonical finish → Anthropic's `stop_reason`, from the shared table. When the upstream was
 * Anthropic itself and its raw reason maps back to the same unified reason (`pause_turn`,
 * `model_context_window_exceeded`), the raw reason is kept so nothing is lost in a round trip.
 */
export function toAnthropicStopReason(finish: FinishReason): AnthropicStopReason {
  const raw = finish.raw;
  if (raw !== undefined && ANTHROPIC_STOP_REASONS.has(raw) && fromAnthropicStopReason(raw).unified === finish.unified) {
    return raw as AnthropicStopReason;
  }
  return FINISH_REASON_TABLE[finish.unified].anthropic;
}

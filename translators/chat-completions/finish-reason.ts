import { FINISH_REASON_TABLE, fromChatFinishReason, type FinishReason } from '../canonical/finish-reason.ts';
import type { ChatFinishReason } from './wire-types.ts';

export { fromChatFinishReason };

/**
 * A canonical finish → chat's `finish_reason`, from the shared table (the single place that maps
 * finish reasons): a stop sequence reads `stop`, an error or anything unknown reads `stop` too.
 */
export function toChatFinishReason(finish: FinishReason): ChatFinishReason {
  return FINISH_REASON_TABLE[finish.unified].chat;
}

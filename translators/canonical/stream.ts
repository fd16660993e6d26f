import type { FinishReason } from './finish-reason.ts';
import type { CanonicalUsage } from './usage.ts';

/**
 * One event of a canonical generation stream. Decoders guarantee the grammar below, whatever
 * the upstream sent, so encoders can stay simple:
 *
 *   message-start (text-start text-delta* text-end | tool-call-start tool-call-delta* tool-call-end
 *                  | reasoning-start reasoning-delta* reasoning-end)* usage* finish
 *   ... or, at any point after message-start, a single `error` that ends the stream.
 *
 * `index` is the block's ordinal within the message (0, 1, 2, … in order of opening). Blocks
 * may interleave (parallel tool calls), but a block only gets deltas between its start and end.
 */
export type StreamEvent =
  | { type: 'message-start'; id: string; model: string; created: number; usage?: Partial<CanonicalUsage> }
  | { type: 'text-start'; index: number }
  | { type: 'text-delta'; index: number; delta: string }
  | { type: 'text-end'; index: number }
  | { type: 'tool-call-start'; index: number; id: string; name: string }
  | { type: 'tool-call-delta'; index: number; delta: string }
  | { type: 'tool-call-end'; index: number }
  /** Reasoning; `redacted` carries a redacted block's opaque data whole (it has no deltas). */
  | { type: 'reasoning-start'; index: number; redacted?: string }
  | { type: 'reasoning-delta'; index: number; delta: string }
  /** `signature` (Anthropic) arrives last, and must reach the client unchanged. */
  | { type: 'reasoning-end'; index: number; signature?: string }
  /** A usage report mid-stream (Anthropic's message_start input tokens, for instance). */
  | { type: 'usage'; usage: Partial<CanonicalUsage> }
  | { type: 'finish'; finishReason: FinishReason; stopSequence?: string; usage: CanonicalUsage }
  | { type: 'error'; error: StreamError };

export interface StreamError {
  /** A short machine word: `upstream_error`, `invalid_upstream_stream`, `stream_truncated`, … */
  code: string;
  message: string;
}

export type StreamEventType = StreamEvent['type'];

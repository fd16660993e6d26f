/**
 * Why a generation stopped. `unified` is ours; `raw` is what the upstream said, kept for records.
 * The table below is the single place that maps finish reasons across the three wire formats.
 */
export type UnifiedFinishReason =
  | 'stop'
  | 'stop-sequence'
  | 'length'
  | 'tool-calls'
  | 'content-filter'
  | 'error'
  | 'other';

export interface FinishReason {
  unified: UnifiedFinishReason;
  raw?: string;
}

type ChatFinish = 'stop' | 'length' | 'tool_calls' | 'content_filter';
type AnthropicStop = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'refusal' | 'pause_turn';
/** Responses API: a `status` plus `incomplete_details.reason` when incomplete. */
interface ResponsesEnding {
  status: 'completed' | 'incomplete' | 'failed';
  incompleteReason?: 'max_output_tokens' | 'content_filter';
}

export const FINISH_REASON_TABLE: Record<
  UnifiedFinishReason,
  { chat: ChatFinish; anthropic: AnthropicStop; responses: ResponsesEnding }
> = {
  stop: { chat: 'stop', anthropic: 'end_turn', responses: { status: 'completed' } },
  'stop-sequence': { chat: 'stop', anthropic: 'stop_sequence', responses: { status: 'completed' } },
  length: { chat: 'length', anthropic: 'max_tokens', responses: { status: 'incomplete', incompleteReason: 'max_output_tokens' } },
  'tool-calls': { chat: 'tool_calls', anthropic: 'tool_use', responses: { status: 'completed' } },
  'content-filter': { chat: 'content_filter', anthropic: 'refusal', responses: { status: 'incomplete', incompleteReason: 'content_filter' } },
  error: { chat: 'stop', anthropic: 'end_turn', responses: { status: 'failed' } },
  other: { chat: 'stop', anthropic: 'end_turn', responses: { status: 'completed' } },
};

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

/** Responses reports tool calls only through the output items, so the caller passes that fact in. */
export function fromResponsesStatus(
  status: string | undefined,
  incompleteReason: string | undefined,
  hasToolCalls: boolean,
): FinishReason {
  const raw = incompleteReason ? `${status}:${incompleteReason}` : status;
  if (status === 'failed') return { unified: 'error', raw };
  if (status === 'incomplete') {
    return { unified: incompleteReason === 'content_filter' ? 'content-filter' : 'length', raw };
  }
  return { unified: hasToolCalls ? 'tool-calls' : 'stop', raw };
}

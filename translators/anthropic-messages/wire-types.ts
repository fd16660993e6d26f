/**
 * The Anthropic Messages wire shapes the gateway writes, taken from `@anthropic-ai/sdk`
 * (resources/messages/messages.d.ts). Fields the SDK types as required but the gateway has no
 * value for are written as `null`, as the API itself does.
 * @see https://docs.anthropic.com/en/api/messages
 */

export type AnthropicStopReason =
  | 'end_turn'
  | 'max_tokens'
  | 'stop_sequence'
  | 'tool_use'
  | 'pause_turn'
  | 'refusal'
  | 'model_context_window_exceeded';

export const ANTHROPIC_STOP_REASONS: ReadonlySet<string> = new Set<AnthropicStopReason>([
  'end_turn',
  'max_tokens',
  'stop_sequence',
  'tool_use',
  'pause_turn',
  'refusal',
  'model_context_window_exceeded',
]);

/** `Usage` of a Message (non-stream body and `message_start`). */
export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number | null;
  cache_read_input_tokens: number | null;
  cache_creation: null;
  inference_geo: null;
  output_tokens_details: { thinking_tokens: number } | null;
  server_tool_use: null;
  service_tier: null;
  speed: null;
}

/** `MessageDeltaUsage`: cumulative figures of the final `message_delta`. */
export interface AnthropicDeltaUsage {
  input_tokens: number | null;
  output_tokens: number;
  cache_creation_input_tokens: number | null;
  cache_read_input_tokens: number | null;
  output_tokens_details: { thinking_tokens: number } | null;
  server_tool_use: null;
}

export interface AnthropicTextBlock {
  type: 'text';
  text: string;
  citations: null;
}

export interface AnthropicToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
  caller: { type: 'direct' };
}

export type AnthropicContentBlock =
  | AnthropicTextBlock
  | AnthropicToolUseBlock
  | AnthropicThinkingBlock
  | AnthropicRedactedThinkingBlock;

export interface AnthropicMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: AnthropicContentBlock[];
  stop_reason: AnthropicStopReason | null;
  stop_sequence: string | null;
  stop_details: null;
  container: null;
  diagnostics: null;
  usage: AnthropicUsage;
}

export interface AnthropicThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature: string;
}

export interface AnthropicRedactedThinkingBlock {
  type: 'redacted_thinking';
  data: string;
}

/** Request side (what the gateway sends to an Anthropic upstream). */
export interface AnthropicCacheControl {
  type: 'ephemeral';
  ttl?: '5m' | '1h';
}

export interface AnthropicTextParam {
  type: 'text';
  text: string;
  cache_control?: AnthropicCacheControl;
}

export interface AnthropicImageParam {
  type: 'image';
  source: { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };
  cache_control?: AnthropicCacheControl;
}

export interface AnthropicToolUseParam {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
  cache_control?: AnthropicCacheControl;
}

export interface AnthropicToolResultParam {
  type: 'tool_result';
  tool_use_id: string;
  content?: Array<AnthropicTextParam | AnthropicImageParam>;
  is_error?: boolean;
  cache_control?: AnthropicCacheControl;
}

export type AnthropicContentParam =
  | AnthropicTextParam
  | AnthropicImageParam
  | AnthropicToolUseParam
  | AnthropicToolResultParam
  | AnthropicThinkingBlock
  | AnthropicRedactedThinkingBlock;

export type AnthropicThinking =
  | { type: 'enabled'; budget_tokens: number }
  | { type: 'adaptive' }
  | { type: 'disabled' };

export interface AnthropicMessageParam {
  role: 'user' | 'assistant';
  content: AnthropicContentParam[];
}

export interface AnthropicToolParam {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
  strict?: boolean;
  cache_control?: AnthropicCacheControl;
}

export type AnthropicToolChoice =
  | { type: 'auto'; disable_parallel_tool_use?: boolean }
  | { type: 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean }
  | { type: 'none' };

export interface AnthropicRequest {
  model: string;
  max_tokens: number;
  messages: AnthropicMessageParam[];
  /** A string, or text blocks when any system text carries a cache mark. */
  system?: string | AnthropicTextParam[];
  stream: boolean;
  temperature?: number;
  top_p?: number;
  stop_sequences?: string[];
  tools?: AnthropicToolParam[];
  tool_choice?: AnthropicToolChoice;
  metadata?: { user_id: string };
  output_config?: {
    format?: { type: 'json_schema'; schema: Record<string, unknown> };
    effort?: 'low' | 'medium' | 'high';
  };
  thinking?: AnthropicThinking;
}

/** The error types this gateway emits in an `event: error` (a subset of the SDK's `ErrorType`). */
export type AnthropicStreamErrorType = 'api_error' | 'overloaded_error';

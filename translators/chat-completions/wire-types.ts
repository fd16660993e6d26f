/**
 * The chat-completions wire shapes the gateway reads and writes, taken from the openai SDK's
 * `resources/chat/completions/completions.d.ts` and `resources/completions.d.ts` (only what a
 * function-calling text model uses). Optional SDK fields the gateway has no value for
 * (`system_fingerprint?: string`, `service_tier?`, `annotations?`) are left out rather than
 * written as null, since the SDK does not type them as nullable.
 * @see https://platform.openai.com/docs/api-reference/chat
 */

export type ChatFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call';

/** `CompletionUsage`; the details objects are written only when the figures are known. */
export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens: number };
  completion_tokens_details?: { reasoning_tokens: number };
}

/** `ChatCompletionMessageFunctionToolCall`. */
export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** `ChatCompletionMessage` (the non-stream reply). */
export interface ChatCompletionMessage {
  role: 'assistant';
  content: string | null;
  refusal: string | null;
  tool_calls?: ChatToolCall[];
  /** Reasoning text (DeepSeek's field; OpenAI's own API has none). */
  reasoning_content?: string;
}

/** `ChatCompletion`: the non-stream body. */
export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: Array<{ index: number; message: ChatCompletionMessage; logprobs: null; finish_reason: ChatFinishReason }>;
  usage: ChatUsage;
}

/** `ChatCompletionChunk.Choice.Delta.ToolCall`: `id`, `type` and `name` only on a call's first piece. */
export interface ChatToolCallDelta {
  index: number;
  id?: string;
  type?: 'function';
  function: { name?: string; arguments: string };
}

export interface ChatDelta {
  role?: 'assistant';
  content?: string | null;
  /** Reasoning text, as DeepSeek and other OpenAI-compatible servers stream it (not in OpenAI's own types). */
  reasoning_content?: string;
  refusal?: string | null;
  tool_calls?: ChatToolCallDelta[];
}

export interface ChatChunkChoice {
  index: number;
  delta: ChatDelta;
  logprobs: null;
  finish_reason: ChatFinishReason | null;
}

/** `ChatCompletionChunk`: `usage` is present (null, then the figures) only with `include_usage`. */
export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: ChatChunkChoice[];
  usage?: ChatUsage | null;
}

/** Request side: what the gateway sends to an OpenAI-compatible upstream. */
export type ChatContentPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string; detail?: 'auto' | 'low' | 'high' } };

export type ChatMessageParam =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | ChatContentPart[] }
  | { role: 'assistant'; content: string | null; tool_calls?: ChatToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

/** `ChatCompletionFunctionTool` with `Shared.FunctionDefinition`. */
export interface ChatTool {
  type: 'function';
  function: { name: string; description?: string; parameters: Record<string, unknown>; strict?: boolean };
}

export type ChatToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } };

/** `Shared.ResponseFormatText | ResponseFormatJSONObject | ResponseFormatJSONSchema`. */
export type ChatResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | {
      type: 'json_schema';
      json_schema: { name: string; schema: Record<string, unknown>; strict?: boolean; description?: string };
    };

export interface ChatRequest {
  model: string;
  messages: ChatMessageParam[];
  stream: boolean;
  /** Always `{include_usage: true}` on a stream, so usage is never missing. */
  stream_options?: { include_usage: true };
  temperature?: number;
  top_p?: number;
  max_tokens?: number;
  /** The output cap OpenAI's reasoning models take instead of `max_tokens`. */
  max_completion_tokens?: number;
  stop?: string[];
  tools?: ChatTool[];
  tool_choice?: ChatToolChoice;
  parallel_tool_calls?: boolean;
  response_format?: ChatResponseFormat;
  user?: string;
  reasoning_effort?: 'minimal' | 'low' | 'medium' | 'high';
}

/** The error object of an SSE error chunk (and of an HTTP error body). */
export interface ChatErrorObject {
  message: string;
  type: 'server_error';
  param: null;
  code: string;
}

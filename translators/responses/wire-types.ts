/**
 * The Responses API wire shapes this translator writes, taken from the openai SDK's
 * `resources/responses/responses.d.ts` (only the parts a function-calling text model produces).
 */

export interface ResponsesOutputText {
  type: 'output_text';
  text: string;
  /** Always empty: the gateway produces no citations and no logprobs. */
  annotations: never[];
  logprobs: never[];
}

export type ItemStatus = 'in_progress' | 'completed' | 'incomplete';

export interface ResponsesMessageItem {
  type: 'message';
  id: string;
  status: ItemStatus;
  role: 'assistant';
  content: ResponsesOutputText[];
}

export interface ResponsesFunctionCallItem {
  type: 'function_call';
  id: string;
  call_id: string;
  name: string;
  arguments: string;
  status: ItemStatus;
}

export interface ResponsesReasoningItem {
  type: 'reasoning';
  id: string;
  summary: Array<{ type: 'summary_text'; text: string }>;
  content: Array<{ type: 'reasoning_text'; text: string }>;
  encrypted_content: string | null;
  status: ItemStatus;
}

export type ResponsesOutputItem = ResponsesMessageItem | ResponsesFunctionCallItem | ResponsesReasoningItem;

export interface ResponsesFunctionTool {
  type: 'function';
  name: string;
  description: string | null;
  parameters: Record<string, unknown>;
  strict: boolean | null;
}

export type ResponsesToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; name: string };

export type ResponsesTextFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | {
      type: 'json_schema';
      name: string;
      schema: Record<string, unknown>;
      strict: boolean | null;
      description?: string;
    };

export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number; cache_write_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export type ResponsesStatus = 'completed' | 'incomplete' | 'failed' | 'in_progress';

/** The codes of the SDK's closed list that the gateway uses. */
export type ResponsesErrorCode = 'server_error' | 'rate_limit_exceeded' | 'invalid_prompt';

export interface ResponsesErrorObject {
  code: ResponsesErrorCode;
  message: string;
}

/** The `response` object: the non-stream body and every lifecycle event's snapshot. */
export interface ResponsesResponseObject {
  id: string;
  object: 'response';
  created_at: number;
  status: ResponsesStatus;
  background: boolean;
  completed_at?: number;
  error: ResponsesErrorObject | null;
  incomplete_details: { reason: 'max_output_tokens' | 'content_filter' } | null;
  instructions: string | null;
  max_output_tokens: number | null;
  model: string;
  output: ResponsesOutputItem[];
  parallel_tool_calls: boolean;
  previous_response_id: string | null;
  reasoning: { effort: 'minimal' | 'low' | 'medium' | 'high' | 'none' | null; summary: null };
  service_tier: 'default';
  store: boolean;
  temperature: number | null;
  text: { format: ResponsesTextFormat };
  tool_choice: ResponsesToolChoice;
  tools: ResponsesFunctionTool[];
  top_p: number | null;
  truncation: 'disabled';
  usage: ResponsesUsage | null;
  user?: string;
  metadata: Record<string, string>;
}

/** What the client asked for, echoed back on every response object (OpenAI does the same). */
export interface ResponsesEcho {
  instructions: string | null;
  previousResponseId: string | null;
  store: boolean;
  temperature: number | null;
  topP: number | null;
  maxOutputTokens: number | null;
  tools: ResponsesFunctionTool[];
  toolChoice: ResponsesToolChoice;
  parallelToolCalls: boolean;
  textFormat: ResponsesTextFormat;
  metadata: Record<string, string>;
  /** The request's `reasoning.effort`, echoed back. */
  reasoningEffort: 'minimal' | 'low' | 'medium' | 'high' | 'none' | null;
  user?: string;
}

/** OpenAI's defaults for a request that set nothing. */
export const defaultEcho = (): ResponsesEcho => ({
  instructions: null,
  previousResponseId: null,
  store: true,
  temperature: 1,
  topP: 1,
  maxOutputTokens: null,
  reasoningEffort: null,
  tools: [],
  toolChoice: 'auto',
  parallelToolCalls: true,
  textFormat: { type: 'text' },
  metadata: {},
});

/** Output item ids: `msg_…` for messages, `fc_…` for function calls, `rs_…` for reasoning. */
export type ItemKind = 'msg' | 'fc' | 'rs';
export type ItemIdFn = (kind: ItemKind, outputIndex: number) => string;

/**
 * The canonical generation request: what every wire format decodes into and every upstream
 * encoder reads from. Nothing here is specific to OpenAI or Anthropic.
 */

/**
 * A prompt-cache breakpoint (Anthropic's `cache_control`): the prompt up to and including the
 * marked block may be cached. Carried on every block that can hold one so a request reaches an
 * Anthropic upstream with the client's marks where they were (docs/protocol-mapping.md).
 */
export interface CacheControl {
  type: 'ephemeral';
  /** Cache lifetime; Anthropic's default is 5 minutes. */
  ttl?: '5m' | '1h';
}

export type ImageSource = { kind: 'url'; url: string } | { kind: 'base64'; mediaType: string; data: string };

export interface TextPart {
  type: 'text';
  text: string;
  cacheControl?: CacheControl;
}

export interface ImagePart {
  type: 'image';
  source: ImageSource;
  /** OpenAI's `detail` hint; other formats have no equivalent. */
  detail?: 'auto' | 'low' | 'high';
  cacheControl?: CacheControl;
}

export interface ToolCallPart {
  type: 'tool-call';
  /** Upstream or gateway issued id; tool results refer to it. */
  id: string;
  name: string;
  /** The arguments as JSON text, exactly as the model produced them. */
  arguments: string;
  cacheControl?: CacheControl;
}

export interface ToolResultPart {
  type: 'tool-result';
  toolCallId: string;
  /** What the tool returned: text and images (no format names the tool in its result). */
  content: Array<TextPart | ImagePart>;
  isError?: boolean;
  cacheControl?: CacheControl;
}

/**
 * The model's reasoning before its answer. `signature` (Anthropic thinking) and `redacted`
 * (Anthropic redacted_thinking data, encrypted) must go back upstream byte for byte in the next
 * turn, or an upstream refuses a conversation that continues after a tool call.
 */
export interface ReasoningPart {
  type: 'reasoning';
  /** The visible reasoning text ('' for a redacted block). */
  text: string;
  signature?: string;
  /** Opaque encrypted reasoning (a `redacted_thinking` block's `data`). */
  redacted?: string;
}

export type UserContentPart = TextPart | ImagePart;
export type AssistantContentPart = TextPart | ToolCallPart | ReasoningPart;

export type CanonicalMessage =
  | { role: 'system'; content: TextPart[] }
  | { role: 'user'; content: UserContentPart[] }
  | { role: 'assistant'; content: AssistantContentPart[] }
  | { role: 'tool'; content: ToolResultPart[] };

export interface ToolDefinition {
  name: string;
  description?: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
  strict?: boolean;
  cacheControl?: CacheControl;
}

export type ReasoningEffort = 'minimal' | 'low' | 'medium' | 'high';

/**
 * Reasoning settings. Formats speak of it differently (OpenAI's `reasoning_effort` /
 * `reasoning.effort`, Anthropic's `thinking.budget_tokens`); each encoder maps what it gets into
 * its own terms (docs/protocol-mapping.md has the effort ↔ budget table).
 */
export interface ReasoningSettings {
  /**
   * True: reasoning asked for; false: turned off (Anthropic `thinking: {type: 'disabled'}`);
   * unset: only an effort was given without turning thinking on (Anthropic `output_config.effort`).
   */
  enabled?: boolean;
  effort?: ReasoningEffort;
  budgetTokens?: number;
}

export type ToolChoice = { type: 'auto' } | { type: 'none' } | { type: 'required' } | { type: 'tool'; name: string };

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json' }
  | { type: 'json-schema'; name: string; schema: Record<string, unknown>; strict?: boolean; description?: string };

export interface CanonicalRequest {
  /** The gateway's model id (`provider/model`). Providers swap in their upstream id. */
  model: string;
  /**
   * System text lives in the message list as `role: 'system'` messages, in order. Encoders for
   * formats with a single top-level system field (Anthropic, Responses `instructions`) gather them.
   */
  messages: CanonicalMessage[];
  tools?: ToolDefinition[];
  toolChoice?: ToolChoice;
  parallelToolCalls?: boolean;
  temperature?: number;
  topP?: number;
  maxTokens?: number;
  stopSequences?: string[];
  responseFormat?: ResponseFormat;
  stream: boolean;
  /** End-user id for upstream abuse tracking (`user` / `metadata.user_id`). */
  user?: string;
  reasoning?: ReasoningSettings;
}

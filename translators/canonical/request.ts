/**
 * The canonical generation request: what every wire format decodes into and every upstream
 * encoder reads from. Nothing here is specific to OpenAI or Anthropic.
 */

export type ImageSource = { kind: 'url'; url: string } | { kind: 'base64'; mediaType: string; data: string };

export interface TextPart {
  type: 'text';
  text: string;
}

export interface ImagePart {
  type: 'image';
  source: ImageSource;
  /** OpenAI's `detail` hint; other formats have no equivalent. */
  detail?: 'auto' | 'low' | 'high';
}

export interface ToolCallPart {
  type: 'tool-call';
  /** Upstream or gateway issued id; tool results refer to it. */
  id: string;
  name: string;
  /** The arguments as JSON text, exactly as the model produced them. */
  arguments: string;
}

export interface ToolResultPart {
  type: 'tool-result';
  toolCallId: string;
  /** What the tool returned: text and images (no format names the tool in its result). */
  content: Array<TextPart | ImagePart>;
  isError?: boolean;
}

export type UserContentPart = TextPart | ImagePart;
export type AssistantContentPart = TextPart | ToolCallPart;

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
}

import type { CanonicalResponse } from '../canonical/response.ts';
import { toChatFinishReason } from './finish-reason.ts';
import { toChatUsage } from './usage.ts';
import type { ChatCompletion, ChatCompletionMessage, ChatToolCall } from './wire-types.ts';

export interface ChatEncodeOptions {
  /** The `chatcmpl-…` id the client sees. */
  id: string;
  /** The gateway's model id. */
  model: string;
  /** Unix seconds. */
  created: number;
}

/** Canonical content → the assistant message: text joined, `content: null` when there are only tool calls. */
export function chatMessage(content: CanonicalResponse['content']): ChatCompletionMessage {
  let text = '';
  let reasoning: string | undefined;
  const toolCalls: ChatToolCall[] = [];
  for (const part of content) {
    switch (part.type) {
      case 'text':
        text += part.text;
        break;
      case 'tool-call':
        toolCalls.push({ id: part.id, type: 'function', function: { name: part.name, arguments: part.arguments } });
        break;
      case 'reasoning':
        // Visible reasoning only: a signature or redacted data has no chat field.
        if (part.text) reasoning = (reasoning ?? '') + part.text;
        break;
      default: {
        const exhaustive: never = part;
        throw new Error(`unknown content part ${JSON.stringify(exhaustive)}`);
      }
    }
  }
  const message: ChatCompletionMessage = {
    role: 'assistant',
    content: text === '' && toolCalls.length ? null : text,
    refusal: null,
  };
  if (toolCalls.length) message.tool_calls = toolCalls;
  if (reasoning !== undefined) message.reasoning_content = reasoning;
  return message;
}

/** A finished canonical response → the `chat.completion` the client receives (one choice). */
export function encodeChatResponse(res: CanonicalResponse, opts: ChatEncodeOptions): ChatCompletion {
  return {
    id: opts.id,
    object: 'chat.completion',
    created: opts.created,
    model: opts.model,
    choices: [
      {
        index: 0,
        message: chatMessage(res.content),
        logprobs: null,
        finish_reason: toChatFinishReason(res.finishReason),
      },
    ],
    usage: toChatUsage(res.usage),
  };
}

import type { CanonicalMessage, ImagePart, TextPart, UserContentPart } from '../canonical/request.ts';
import type { TranslationWarning } from '../canonical/warnings.ts';
import { encodeImageUrl } from '../common/image-url.ts';
import type { ChatContentPart, ChatMessageParam, ChatToolCall } from './wire-types.ts';

const joinText = (parts: ReadonlyArray<{ type: string; text?: string }>): string =>
  parts.map((part) => (part.type === 'text' ? (part.text ?? '') : '')).join('');

function imagePart(part: ImagePart): ChatContentPart {
  const url = encodeImageUrl(part.source);
  return { type: 'image_url', image_url: part.detail ? { url, detail: part.detail } : { url } };
}

/**
 * User content: one text part is sent as a plain string (every OpenAI-compatible server takes
 * that, not all take part arrays); anything else as `text` / `image_url` parts.
 */
function userContent(parts: UserContentPart[]): string | ChatContentPart[] {
  const only = parts[0];
  if (parts.length === 0) return '';
  if (parts.length === 1 && only?.type === 'text') return only.text;
  return parts.map(
    (part): ChatContentPart => (part.type === 'text' ? { type: 'text', text: part.text } : imagePart(part)),
  );
}

/** Chat tool messages carry text only: images in a tool result are dropped, and so is the error flag. */
function toolContent(
  content: Array<TextPart | ImagePart>,
  field: string,
  isError: boolean | undefined,
  warnings: TranslationWarning[],
): string {
  if (content.some((part) => part.type === 'image')) {
    warnings.push({
      type: 'unsupported-content',
      field,
      message: 'chat-completions tool messages carry text only; images in the tool result were dropped',
    });
  }
  if (isError)
    warnings.push({
      type: 'unsupported-content',
      field,
      message: 'tool results cannot be marked as errors in the chat-completions format',
    });
  return joinText(content);
}

function encodeMessage(message: CanonicalMessage, i: number, warnings: TranslationWarning[]): ChatMessageParam[] {
  switch (message.role) {
    case 'system':
      return [{ role: 'system', content: joinText(message.content) }];
    case 'user':
      return [{ role: 'user', content: userContent(message.content) }];
    case 'assistant': {
      const toolCalls = message.content.flatMap((part): ChatToolCall[] =>
        part.type === 'tool-call'
          ? [{ id: part.id, type: 'function', function: { name: part.name, arguments: part.arguments } }]
          : [],
      );
      const texts = message.content.filter((part) => part.type === 'text');
      const content = texts.length || !toolCalls.length ? joinText(texts) : null;
      return [
        toolCalls.length ? { role: 'assistant', content, tool_calls: toolCalls } : { role: 'assistant', content },
      ];
    }
    case 'tool':
      return message.content.map((result, j) => ({
        role: 'tool',
        tool_call_id: result.toolCallId,
        content: toolContent(result.content, `messages[${i}].content[${j}]`, result.isError, warnings),
      }));
    default: {
      const exhaustive: never = message;
      throw new Error(`unknown role ${JSON.stringify(exhaustive)}`);
    }
  }
}

/** Canonical messages → chat messages: system stays in place, each tool result is its own `tool` message. */
export function encodeMessages(messages: CanonicalMessage[], warnings: TranslationWarning[]): ChatMessageParam[] {
  return messages.flatMap((message, i) => encodeMessage(message, i, warnings));
}

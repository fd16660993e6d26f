import type { AssistantContentPart, CacheControl, CanonicalMessage } from '../canonical/request.ts';
import type { TranslationWarning } from '../canonical/warnings.ts';
import { decodeAssistantContent, decodeTextContent, decodeUserContent } from './decode-content.ts';
import {
  AssistantMessageSchema,
  ContentMessageSchema,
  MessageSchema,
  ToolCallSchema,
  ToolMessageSchema,
} from './request-schema.ts';
import { appendMessage } from '../common/append-message.ts';
import { decodeCacheControl } from '../common/cache-control.ts';
import { invalid, isSet, parseAt, type Json } from '../common/validation.ts';

/**
 * A message-level `cache_control` (LiteLLM's convention, for string content) marks the message's
 * last part, which is where Anthropic's breakpoint goes: the prompt up to the end of this message.
 */
function markLast<T extends { type: string; cacheControl?: CacheControl }>(parts: T[], raw: Json, path: string): T[] {
  const mark = decodeCacheControl(raw, path);
  const last = parts.at(-1);
  if (mark && last && last.type !== 'reasoning') parts[parts.length - 1] = { ...last, cacheControl: mark };
  return parts;
}

/** Participant `name`s have no canonical field; dropping one is reported. */
function dropName(message: { name?: string | null }, path: string, warnings: TranslationWarning[]): void {
  if (message.name)
    warnings.push({
      type: 'unsupported-setting',
      field: `${path}.name`,
      message: 'message names are not supported and were ignored',
    });
}

function decodeAssistant(raw: Json, path: string, warnings: TranslationWarning[]): AssistantContentPart[] {
  const message = parseAt(AssistantMessageSchema, raw, path);
  dropName(message, path, warnings);
  if (isSet(raw.function_call))
    invalid(`${path}.function_call`, 'function_call is deprecated and not supported; use tool_calls');
  if (isSet(raw.audio))
    warnings.push({
      type: 'unsupported-content',
      field: `${path}.audio`,
      message: 'earlier audio replies are not supported and were dropped',
    });
  const parts: AssistantContentPart[] = [];
  // DeepSeek-style clients send the earlier turn's reasoning back; it is kept for the encoders to place or warn about.
  const reasoning = raw.reasoning_content;
  if (isSet(reasoning) && typeof reasoning !== 'string') invalid(`${path}.reasoning_content`, 'must be a string');
  if (typeof reasoning === 'string' && reasoning !== '') parts.push({ type: 'reasoning', text: reasoning });
  if (isSet(message.content)) parts.push(...decodeAssistantContent(message.content ?? '', `${path}.content`, warnings));
  if (message.refusal) {
    warnings.push({
      type: 'changed-value',
      field: `${path}.refusal`,
      message: 'an earlier refusal is sent as plain assistant text',
    });
    parts.push({ type: 'text', text: message.refusal });
  }
  (message.tool_calls ?? []).forEach((rawCall, j) => {
    const call = parseAt(ToolCallSchema, rawCall, `${path}.tool_calls[${j}]`);
    parts.push({ type: 'tool-call', id: call.id, name: call.function.name, arguments: call.function.arguments });
  });
  if (!isSet(message.content) && !message.tool_calls?.length && !message.refusal)
    invalid(`${path}.content`, 'is required unless tool_calls is set');
  return parts;
}

/**
 * `messages` → canonical messages. `developer` is a system message; consecutive `tool` messages
 * (the results of one turn's parallel calls) become one canonical tool message.
 */
export function decodeMessages(messages: unknown[], warnings: TranslationWarning[]): CanonicalMessage[] {
  const out: CanonicalMessage[] = [];
  messages.forEach((raw, i) => {
    const path = `messages[${i}]`;
    const { role } = parseAt(MessageSchema, raw, path);
    const obj = raw as Json;
    switch (role) {
      case 'system':
      case 'developer': {
        const message = parseAt(ContentMessageSchema, obj, path);
        dropName(message, path, warnings);
        out.push({
          role: 'system',
          content: markLast(decodeTextContent(message.content, `${path}.content`, role), obj, path),
        });
        break;
      }
      case 'user': {
        const message = parseAt(ContentMessageSchema, obj, path);
        dropName(message, path, warnings);
        out.push({ role: 'user', content: markLast(decodeUserContent(message.content, `${path}.content`), obj, path) });
        break;
      }
      case 'assistant':
        out.push({ role: 'assistant', content: markLast(decodeAssistant(obj, path, warnings), obj, path) });
        break;
      case 'tool': {
        const message = parseAt(ToolMessageSchema, obj, path);
        const content = decodeTextContent(message.content, `${path}.content`, 'tool');
        appendMessage(out, {
          role: 'tool',
          content: markLast([{ type: 'tool-result', toolCallId: message.tool_call_id, content }], obj, path),
        });
        break;
      }
      case 'function':
        invalid(`${path}.role`, 'function messages are deprecated and not supported; use tool messages');
        break;
      default: {
        const exhaustive: never = role;
        throw new Error(`unknown role ${String(exhaustive)}`);
      }
    }
  });
  return out;
}

import { decodeReasoningItem } from './reasoning-items.ts';
import * as v from 'valibot';
import type { CanonicalMessage } from '../canonical/request.ts';
import type { TranslationWarning } from '../canonical/warnings.ts';
import { decodeAssistantContent, decodeSystemContent, decodeToolOutput, decodeUserContent } from './input-content.ts';
import { appendMessage } from '../common/append-message.ts';
import { invalid, isRecord, parseAt, str } from '../common/validation.ts';

const MessageSchema = v.looseObject({
  role: v.picklist(['user', 'assistant', 'system', 'developer'], 'must be one of user, assistant, system, developer'),
  content: v.union([v.string(), v.array(v.unknown())], 'must be a string or an array of content parts'),
});
const FunctionCallSchema = v.looseObject({
  call_id: v.pipe(str(), v.nonEmpty('must not be empty')),
  name: v.pipe(str(), v.nonEmpty('must not be empty')),
  arguments: str(),
});
const FunctionCallOutputSchema = v.looseObject({
  call_id: v.pipe(str(), v.nonEmpty('must not be empty')),
  output: v.unknown(),
});

/**
 * `input` → canonical messages. Consecutive assistant items (a message and its function calls)
 * become one assistant message, and consecutive function call outputs one tool message, as the
 * other formats expect them.
 */
export function decodeInput(input: string | unknown[], warnings: TranslationWarning[]): CanonicalMessage[] {
  if (typeof input === 'string') return [{ role: 'user', content: [{ type: 'text', text: input }] }];
  if (input.length === 0) invalid('input', 'must contain at least one item');
  const messages: CanonicalMessage[] = [];

  input.forEach((item, i) => {
    const at = `input[${i}]`;
    if (!isRecord(item)) invalid(at, 'must be an object');
    // `type` is optional on messages and on item references (`{id}` alone).
    const type = item.type ?? (item.role === undefined && typeof item.id === 'string' ? 'item_reference' : 'message');
    switch (type) {
      case 'message': {
        const message = decodeMessage(item, at, warnings);
        if (message.role === 'assistant') appendMessage(messages, message);
        else messages.push(message);
        break;
      }
      case 'function_call': {
        const call = parseAt(FunctionCallSchema, item, at);
        appendMessage(messages, {
          role: 'assistant',
          content: [{ type: 'tool-call', id: call.call_id, name: call.name, arguments: call.arguments }],
        });
        break;
      }
      case 'function_call_output': {
        const result = parseAt(FunctionCallOutputSchema, item, at);
        const content = decodeToolOutput(result.output, `${at}.output`, warnings);
        appendMessage(messages, {
          role: 'tool',
          content: [{ type: 'tool-result', toolCallId: result.call_id, content }],
        });
        break;
      }
      case 'reasoning': {
        const part = decodeReasoningItem(item, at, warnings);
        if (part) appendMessage(messages, { role: 'assistant', content: [part] });
        break;
      }
      case 'item_reference': {
        const id = typeof item.id === 'string' ? item.id : '';
        invalid(
          `${at}.id`,
          `the item reference '${id}' could not be resolved: no stored response has an item with this id`,
        );
        break;
      }
      default:
        invalid(`${at}.type`, `unsupported input item type "${String(type)}"`);
    }
  });
  return messages;
}

function decodeMessage(item: unknown, at: string, warnings: TranslationWarning[]): CanonicalMessage {
  const message = parseAt(MessageSchema, item, at);
  const path = `${at}.content`;
  const content = message.content;
  switch (message.role) {
    case 'user':
      return {
        role: 'user',
        content:
          typeof content === 'string' ? [{ type: 'text', text: content }] : decodeUserContent(content, path, warnings),
      };
    case 'system':
    case 'developer':
      return {
        role: 'system',
        content: typeof content === 'string' ? [{ type: 'text', text: content }] : decodeSystemContent(content, path),
      };
    case 'assistant':
      return {
        role: 'assistant',
        content:
          typeof content === 'string'
            ? [{ type: 'text', text: content }]
            : decodeAssistantContent(content, path, warnings),
      };
    default: {
      const exhaustive: never = message.role;
      throw new Error(`unknown role ${String(exhaustive)}`);
    }
  }
}

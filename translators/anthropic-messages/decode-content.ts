import type {
  AssistantContentPart,
  CanonicalMessage,
  TextPart,
  ToolResultPart,
  UserContentPart,
} from '../canonical/request.ts';
import type { TranslationWarning } from '../canonical/warnings.ts';
import {
  decodeImage,
  decodeText,
  decodeThinking,
  decodeToolResultContent,
  dropped,
  DROPPED_BLOCKS,
  droppedOutsideAssistant,
} from './content-blocks.ts';
import { BlockTypeSchema, MessageSchema, ToolResultBlockSchema, ToolUseBlockSchema } from './request-schema.ts';
import { decodeCacheControl, withCacheControl } from '../common/cache-control.ts';
import { invalid, parseAt } from '../common/validation.ts';

function decodeToolResult(block: unknown, path: string, warnings: TranslationWarning[]): ToolResultPart {
  const result = parseAt(ToolResultBlockSchema, block, path);
  const part: ToolResultPart = {
    type: 'tool-result',
    toolCallId: result.tool_use_id,
    content: decodeToolResultContent(result.content, `${path}.content`, warnings),
  };
  if (result.is_error === true) part.isError = true;
  return withCacheControl(part, decodeCacheControl(block, path));
}

/**
 * A user message. Its `tool_result` blocks become a canonical `tool` message placed first
 * (Anthropic requires them to lead the turn), followed by a `user` message with the other
 * blocks; order within each group is kept.
 */
function decodeUser(blocks: unknown[], path: string, warnings: TranslationWarning[]): CanonicalMessage[] {
  const results: ToolResultPart[] = [];
  const parts: UserContentPart[] = [];
  blocks.forEach((block, j) => {
    const at = `${path}[${j}]`;
    const { type } = parseAt(BlockTypeSchema, block, at);
    if (type === 'text') parts.push(decodeText(block, at));
    else if (type === 'image') parts.push(decodeImage(block, at));
    else if (type === 'tool_result') results.push(decodeToolResult(block, at, warnings));
    else if (type === 'tool_use') invalid(`${at}.type`, 'tool_use blocks are only allowed in assistant messages');
    else if (droppedOutsideAssistant(type)) dropped(type, at, warnings);
    else invalid(`${at}.type`, `unsupported content block type '${type}'`);
  });
  const out: CanonicalMessage[] = [];
  if (results.length) out.push({ role: 'tool', content: results });
  if (parts.length || !results.length) out.push({ role: 'user', content: parts });
  return out;
}

function decodeAssistant(blocks: unknown[], path: string, warnings: TranslationWarning[]): AssistantContentPart[] {
  const parts: AssistantContentPart[] = [];
  blocks.forEach((block, j) => {
    const at = `${path}[${j}]`;
    const { type } = parseAt(BlockTypeSchema, block, at);
    if (type === 'text') parts.push(decodeText(block, at));
    else if (type === 'tool_use') {
      const use = parseAt(ToolUseBlockSchema, block, at);
      const call: AssistantContentPart = {
        type: 'tool-call',
        id: use.id,
        name: use.name,
        arguments: JSON.stringify(use.input),
      };
      parts.push(withCacheControl(call, decodeCacheControl(block, at)));
    } else if (type === 'thinking' || type === 'redacted_thinking') parts.push(decodeThinking(block, at, type));
    else if (type === 'image' || type === 'tool_result')
      invalid(`${at}.type`, `${type} blocks are only allowed in user messages`);
    else if (DROPPED_BLOCKS.has(type)) dropped(type, at, warnings);
    else invalid(`${at}.type`, `unsupported content block type '${type}'`);
  });
  return parts;
}

function decodeSystemBlocks(content: string | unknown[], path: string): TextPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.map((block, j) => {
    const at = `${path}[${j}]`;
    if (parseAt(BlockTypeSchema, block, at).type !== 'text')
      invalid(`${at}.type`, 'system content must be text blocks');
    return decodeText(block, at);
  });
}

/** The top-level `system` field → a leading system message (empty text is dropped). */
export function decodeSystem(system: string | unknown[] | null | undefined): CanonicalMessage[] {
  if (system === undefined || system === null) return [];
  const content = decodeSystemBlocks(system, 'system').filter((part) => part.text !== '');
  return content.length ? [{ role: 'system', content }] : [];
}

/** `messages` → canonical messages. `role: 'system'` entries (newer SDKs allow them) stay in place. */
export function decodeMessages(messages: unknown[], warnings: TranslationWarning[]): CanonicalMessage[] {
  const out: CanonicalMessage[] = [];
  messages.forEach((raw, i) => {
    const path = `messages[${i}]`;
    const message = parseAt(MessageSchema, raw, path);
    const blocks = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
    switch (message.role) {
      case 'user':
        out.push(...decodeUser(blocks, `${path}.content`, warnings));
        break;
      case 'assistant':
        out.push({ role: 'assistant', content: decodeAssistant(blocks, `${path}.content`, warnings) });
        break;
      case 'system':
        out.push({ role: 'system', content: decodeSystemBlocks(message.content, `${path}.content`) });
        break;
      default: {
        const exhaustive: never = message.role;
        throw new Error(`unknown role ${String(exhaustive)}`);
      }
    }
  });
  return out;
}

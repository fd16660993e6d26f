import type { CanonicalMessage } from '../canonical/request.ts';
import type { TranslationWarning } from '../canonical/warnings.ts';
import { cacheControlField } from '../common/cache-control.ts';
import { argumentsToInput, imageBlock, textBlock, thinkingBlock } from './encode-blocks.ts';
import type {
  AnthropicContentParam,
  AnthropicImageParam,
  AnthropicMessageParam,
  AnthropicTextParam,
  AnthropicToolResultParam,
} from './wire-types.ts';

export interface EncodedConversation {
  /** Every canonical system text, in order, with its cache mark. */
  system: AnthropicTextParam[];
  messages: AnthropicMessageParam[];
}

function encodeContent(message: CanonicalMessage, i: number, warnings: TranslationWarning[]): AnthropicContentParam[] {
  const field = (j: number) => `messages[${i}].content[${j}]`;
  switch (message.role) {
    case 'system':
      return [];
    case 'user':
      return message.content.flatMap((part, j): AnthropicContentParam[] =>
        part.type === 'text' ? textBlock(part) : [imageBlock(part, field(j), warnings)],
      );
    case 'assistant':
      return message.content.flatMap((part, j): AnthropicContentParam[] => {
        switch (part.type) {
          case 'text':
            return textBlock(part);
          case 'reasoning':
            return thinkingBlock(part, field(j), warnings);
          case 'tool-call':
            return [
              {
                type: 'tool_use',
                id: part.id,
                name: part.name,
                input: argumentsToInput(part, `${field(j)}.arguments`, warnings),
                ...cacheControlField(part.cacheControl),
              },
            ];
          default: {
            const exhaustive: never = part;
            throw new Error(`unknown content part ${JSON.stringify(exhaustive)}`);
          }
        }
      });
    case 'tool':
      return message.content.map((result, j): AnthropicToolResultParam => {
        const content = result.content.flatMap(
          (part, k): Array<AnthropicTextParam | AnthropicImageParam> =>
            part.type === 'text' ? textBlock(part) : [imageBlock(part, `${field(j)}.content[${k}]`, warnings)],
        );
        return {
          type: 'tool_result',
          tool_use_id: result.toolCallId,
          ...(content.length ? { content } : {}),
          ...(result.isError ? { is_error: true } : {}),
          ...cacheControlField(result.cacheControl),
        };
      });
    default: {
      const exhaustive: never = message;
      throw new Error(`unknown role ${JSON.stringify(exhaustive)}`);
    }
  }
}

/** `tool_result` blocks must open a user turn; other blocks keep their order after them. */
function resultsFirst(content: AnthropicContentParam[]): AnthropicContentParam[] {
  return [...content.filter((b) => b.type === 'tool_result'), ...content.filter((b) => b.type !== 'tool_result')];
}

/**
 * Canonical messages → Anthropic's alternating user/assistant turns: system texts gathered for
 * the top-level `system`, tool results sent as user `tool_result` blocks, consecutive turns of
 * the same role merged, and messages left empty dropped.
 */
export function encodeMessages(messages: CanonicalMessage[], warnings: TranslationWarning[]): EncodedConversation {
  const system: AnthropicTextParam[] = [];
  const out: AnthropicMessageParam[] = [];
  let movedSystem = false;
  messages.forEach((message, i) => {
    if (message.role === 'system') {
      if (out.length && !movedSystem) {
        movedSystem = true;
        warnings.push({
          type: 'changed-value',
          field: `messages[${i}]`,
          message: 'a system message after the conversation start was moved into the top-level system prompt',
        });
      }
      system.push(...message.content.flatMap(textBlock));
      return;
    }
    const content = encodeContent(message, i, warnings);
    if (!content.length) return;
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    const last = out.at(-1);
    if (last && last.role === role) last.content.push(...content);
    else out.push({ role, content });
  });
  for (const message of out) if (message.role === 'user') message.content = resultsFirst(message.content);
  return { system, messages: out };
}

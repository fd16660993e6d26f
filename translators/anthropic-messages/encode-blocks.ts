import type { ImagePart, ReasoningPart, TextPart, ToolCallPart } from '../canonical/request.ts';
import type { TranslationWarning } from '../canonical/warnings.ts';
import { cacheControlField } from '../common/cache-control.ts';
import { asObject } from '../common/validation.ts';
import type { AnthropicContentParam, AnthropicImageParam, AnthropicTextParam } from './wire-types.ts';

/** Single canonical parts → Anthropic request blocks, each with its cache mark (encode-messages.ts puts them in turns). */

/** Anthropic rejects empty text blocks, so they are left out (they carry nothing). */
export function textBlock(part: TextPart): AnthropicTextParam[] {
  return part.text === '' ? [] : [{ type: 'text', text: part.text, ...cacheControlField(part.cacheControl) }];
}

/**
 * Reasoning of an earlier turn goes back as it came: thinking with its signature, redacted
 * thinking with its data. Reasoning from another upstream (no signature) cannot be verified by
 * Anthropic, which refuses unsigned thinking: it is left out with a warning.
 */
export function thinkingBlock(
  part: ReasoningPart,
  field: string,
  warnings: TranslationWarning[],
): AnthropicContentParam[] {
  if (part.redacted !== undefined) return [{ type: 'redacted_thinking', data: part.redacted }];
  if (part.signature !== undefined) return [{ type: 'thinking', thinking: part.text, signature: part.signature }];
  warnings.push({
    type: 'unsupported-content',
    field,
    message: 'reasoning without an Anthropic signature cannot be sent to Anthropic and was dropped',
  });
  return [];
}

export function imageBlock(part: ImagePart, field: string, warnings: TranslationWarning[]): AnthropicImageParam {
  if (part.detail && part.detail !== 'auto') {
    warnings.push({
      type: 'unsupported-setting',
      field: `${field}.detail`,
      message: 'image detail is not supported by Anthropic and was ignored',
    });
  }
  const source = part.source;
  const cache = cacheControlField(part.cacheControl);
  switch (source.kind) {
    case 'base64':
      return { type: 'image', source: { type: 'base64', media_type: source.mediaType, data: source.data }, ...cache };
    case 'url':
      return { type: 'image', source: { type: 'url', url: source.url }, ...cache };
    default: {
      const exhaustive: never = source;
      throw new Error(`unknown image source ${JSON.stringify(exhaustive)}`);
    }
  }
}

/** Arguments JSON text → the `input` object Anthropic wants; anything but an object becomes `{}` with a warning. */
export function argumentsToInput(
  part: ToolCallPart,
  field: string,
  warnings: TranslationWarning[],
): Record<string, unknown> {
  if (part.arguments.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(part.arguments);
  } catch {
    parsed = undefined;
  }
  const input = asObject(parsed);
  if (input) return input;
  warnings.push({
    type: 'changed-value',
    field,
    message: `arguments of tool call ${part.id} are not a JSON object; sent as {}`,
  });
  return {};
}

import type { ImagePart, ReasoningPart, TextPart } from '../canonical/request.ts';
import type { TranslationWarning } from '../canonical/warnings.ts';
import {
  Base64SourceSchema,
  BlockTypeSchema,
  ImageBlockSchema,
  RedactedThinkingBlockSchema,
  TextBlockSchema,
  ThinkingBlockSchema,
  UrlSourceSchema,
} from './request-schema.ts';
import { decodeCacheControl, withCacheControl } from '../common/cache-control.ts';
import { invalid, parseAt } from '../common/validation.ts';

/** Decoders of single client content blocks (text, image, tool_result contents), shared by every role. */

/**
 * Block types Anthropic defines that the canonical model cannot carry (documents, server-tool
 * traffic…, and thinking anywhere but in an assistant turn). They are dropped with a warning;
 * any other type is an error.
 */
export const DROPPED_BLOCKS = new Set([
  'document',
  'search_result',
  'server_tool_use',
  'web_search_tool_result',
  'web_fetch_tool_result',
  'code_execution_tool_result',
  'bash_code_execution_tool_result',
  'text_editor_code_execution_tool_result',
  'tool_search_tool_result',
  'tool_reference',
  'container_upload',
  'mcp_tool_use',
  'mcp_tool_result',
]);

/** Thinking belongs to assistant turns; elsewhere it is dropped like the blocks above. */
export const droppedOutsideAssistant = (type: string): boolean =>
  DROPPED_BLOCKS.has(type) || type === 'thinking' || type === 'redacted_thinking';

export function dropped(type: string, path: string, warnings: TranslationWarning[]): void {
  warnings.push({
    type: 'unsupported-content',
    field: path,
    message: `${type} blocks are not supported and were dropped`,
  });
}

export function decodeText(block: unknown, path: string): TextPart {
  return withCacheControl<TextPart>(
    { type: 'text', text: parseAt(TextBlockSchema, block, path).text },
    decodeCacheControl(block, path),
  );
}

/** A `thinking` or `redacted_thinking` block of an earlier assistant turn, signature and data kept verbatim. */
export function decodeThinking(block: unknown, path: string, type: string): ReasoningPart {
  if (type === 'redacted_thinking') {
    return { type: 'reasoning', text: '', redacted: parseAt(RedactedThinkingBlockSchema, block, path).data };
  }
  const thinking = parseAt(ThinkingBlockSchema, block, path);
  const part: ReasoningPart = { type: 'reasoning', text: thinking.thinking };
  // An empty signature (the gateway's own answers from other upstreams carry one) is no signature.
  if (thinking.signature) part.signature = thinking.signature;
  return part;
}

export function decodeImage(block: unknown, path: string): ImagePart {
  return withCacheControl(decodeImageSource(block, path), decodeCacheControl(block, path));
}

function decodeImageSource(block: unknown, path: string): ImagePart {
  const { source } = parseAt(ImageBlockSchema, block, path);
  switch (source.type) {
    case 'base64': {
      const b64 = parseAt(Base64SourceSchema, source, `${path}.source`);
      return { type: 'image', source: { kind: 'base64', mediaType: b64.media_type, data: b64.data } };
    }
    case 'url':
      return { type: 'image', source: { kind: 'url', url: parseAt(UrlSourceSchema, source, `${path}.source`).url } };
    case 'file':
      return invalid(`${path}.source.type`, 'file sources are not supported; send the image as base64 or url');
    default:
      return invalid(`${path}.source.type`, 'must be one of base64, url');
  }
}

/** Text and image blocks inside a `tool_result`; a plain string is one text part. */
export function decodeToolResultContent(
  content: unknown,
  path: string,
  warnings: TranslationWarning[],
): Array<TextPart | ImagePart> {
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  const parts: Array<TextPart | ImagePart> = [];
  (content as unknown[]).forEach((block, j) => {
    const at = `${path}[${j}]`;
    const { type } = parseAt(BlockTypeSchema, block, at);
    if (type === 'text') parts.push(decodeText(block, at));
    else if (type === 'image') parts.push(decodeImage(block, at));
    else if (droppedOutsideAssistant(type)) dropped(type, at, warnings);
    else invalid(`${at}.type`, `unsupported tool_result content type '${type}'`);
  });
  return parts;
}

import type { ImagePart, TextPart, UserContentPart } from '../canonical/request.ts';
import type { TranslationWarning } from '../canonical/warnings.ts';
import { ImageUrlSchema, PartTypeSchema, RefusalPartSchema, TextPartSchema } from './request-schema.ts';
import { decodeImageUrl } from '../common/image-url.ts';
import { decodeCacheControl, withCacheControl } from '../common/cache-control.ts';
import { invalid, parseAt } from '../common/validation.ts';

/** Decoders of client content parts (`ChatCompletionContentPart` and friends), one part at a time. */

function partType(part: unknown, path: string): string {
  return parseAt(PartTypeSchema, part, path).type;
}

/** `cache_control` on a part (OpenRouter-style) is kept, so it reaches an Anthropic upstream. */
function decodeText(part: unknown, path: string): TextPart {
  return withCacheControl<TextPart>(
    { type: 'text', text: parseAt(TextPartSchema, part, path).text },
    decodeCacheControl(part, path),
  );
}

/**
 * `{type: 'image_url', image_url: {url, detail}}` → an image part: an http(s) URL, or a base64
 * `data:` URI decoded into a base64 source. A bare string `image_url` (sent by some clients) is
 * taken as the URL.
 */
export function decodeImage(part: unknown, path: string): ImagePart {
  const raw = (part as Record<string, unknown>).image_url;
  const at = `${path}.image_url`;
  const image = typeof raw === 'string' ? { url: raw, detail: undefined } : parseAt(ImageUrlSchema, raw, at);
  const source = decodeImageUrl(image.url, at);
  const decoded: ImagePart = image.detail ? { type: 'image', source, detail: image.detail } : { type: 'image', source };
  return withCacheControl(decoded, decodeCacheControl(part, path));
}

/** User content: a string, or `text` and `image_url` parts. Audio and file parts are refused. */
export function decodeUserContent(content: string | unknown[], path: string): UserContentPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.map((part, i): UserContentPart => {
    const at = `${path}[${i}]`;
    const type = partType(part, at);
    switch (type) {
      case 'text':
        return decodeText(part, at);
      case 'image_url':
        return decodeImage(part, at);
      case 'input_audio':
      case 'file':
        return invalid(`${at}.type`, `${type} content is not supported`);
      default:
        return invalid(
          `${at}.type`,
          `unsupported content part type "${type}" in a user message (use text or image_url)`,
        );
    }
  });
}

/** System, developer and tool content: a string or `text` parts only. */
export function decodeTextContent(content: string | unknown[], path: string, role: string): TextPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.map((part, i): TextPart => {
    const at = `${path}[${i}]`;
    const type = partType(part, at);
    if (type !== 'text') invalid(`${at}.type`, `${role} messages take text parts only, not "${type}"`);
    return decodeText(part, at);
  });
}

/** Earlier assistant content: a string, `text` parts and `refusal` parts (kept as text, with a warning). */
export function decodeAssistantContent(
  content: string | unknown[],
  path: string,
  warnings: TranslationWarning[],
): TextPart[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  return content.map((part, i): TextPart => {
    const at = `${path}[${i}]`;
    const type = partType(part, at);
    switch (type) {
      case 'text':
        return decodeText(part, at);
      case 'refusal':
        warnings.push({
          type: 'changed-value',
          field: at,
          message: 'an earlier refusal is sent as plain assistant text',
        });
        return { type: 'text', text: parseAt(RefusalPartSchema, part, at).refusal };
      default:
        return invalid(`${at}.type`, `unsupported content part type "${type}" in an assistant message (use text)`);
    }
  });
}

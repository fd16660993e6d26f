import * as v from 'valibot';
import type { ImagePart, TextPart, UserContentPart } from '../canonical/request.ts';
import type { TranslationWarning } from '../canonical/warnings.ts';
import { decodeImageUrl } from '../common/image-url.ts';
import { invalid, isRecord, nullishString, parseAt, str } from '../common/validation.ts';

const TextSchema = v.looseObject({ text: str() });
const RefusalSchema = v.looseObject({ refusal: str() });
const ImageSchema = v.looseObject({
  image_url: nullishString(),
  file_id: nullishString(),
  detail: v.nullish(v.picklist(['auto', 'low', 'high', 'original'], 'must be one of auto, low, high, original')),
});

/** `input_image` → an image part: an http(s) URL or a base64 `data:` URI. */
export function decodeImage(part: unknown, path: string, warnings: TranslationWarning[]): ImagePart {
  const image = parseAt(ImageSchema, part, path);
  if (!image.image_url) {
    if (image.file_id)
      invalid(`${path}.file_id`, 'file ids are not supported; send the image as image_url (a URL or a data: URI)');
    invalid(`${path}.image_url`, 'is required');
  }
  const url = image.image_url;
  let detail: ImagePart['detail'];
  if (image.detail === 'original') {
    detail = 'high';
    warnings.push({ type: 'changed-value', field: `${path}.detail`, message: 'detail "original" is sent as "high"' });
  } else if (image.detail) {
    detail = image.detail;
  }
  const source = decodeImageUrl(url, `${path}.image_url`);
  return detail ? { type: 'image', source, detail } : { type: 'image', source };
}

function partType(part: unknown, path: string): string {
  if (!isRecord(part)) invalid(path, 'must be an object');
  if (typeof part.type !== 'string') invalid(`${path}.type`, 'is required');
  return part.type;
}

/** User content: `input_text` and `input_image`. */
export function decodeUserContent(content: unknown[], path: string, warnings: TranslationWarning[]): UserContentPart[] {
  return content.map((part, i): UserContentPart => {
    const at = `${path}[${i}]`;
    const type = partType(part, at);
    switch (type) {
      case 'input_text':
        return { type: 'text', text: parseAt(TextSchema, part, at).text };
      case 'input_image':
        return decodeImage(part, at, warnings);
      case 'input_file':
        return invalid(`${at}.type`, 'input_file content is not supported');
      default:
        return invalid(
          `${at}.type`,
          `unsupported content type "${type}" in a user message (use input_text or input_image)`,
        );
    }
  });
}

/** System and developer content: text only. */
export function decodeSystemContent(content: unknown[], path: string): TextPart[] {
  return content.map((part, i): TextPart => {
    const at = `${path}[${i}]`;
    const type = partType(part, at);
    if (type !== 'input_text')
      invalid(`${at}.type`, `system and developer messages take input_text only, not "${type}"`);
    return { type: 'text', text: parseAt(TextSchema, part, at).text };
  });
}

/** Earlier assistant output: `output_text` (and `refusal`, kept as text). */
export function decodeAssistantContent(content: unknown[], path: string, warnings: TranslationWarning[]): TextPart[] {
  return content.map((part, i): TextPart => {
    const at = `${path}[${i}]`;
    const type = partType(part, at);
    switch (type) {
      case 'output_text':
      case 'input_text':
        return { type: 'text', text: parseAt(TextSchema, part, at).text };
      case 'refusal':
        warnings.push({
          type: 'changed-value',
          field: at,
          message: 'an earlier refusal is sent as plain assistant text',
        });
        return { type: 'text', text: parseAt(RefusalSchema, part, at).refusal };
      default:
        return invalid(`${at}.type`, `unsupported content type "${type}" in an assistant message (use output_text)`);
    }
  });
}

/** `function_call_output.output`: a string or input_text / input_image parts. */
export function decodeToolOutput(
  output: unknown,
  path: string,
  warnings: TranslationWarning[],
): Array<TextPart | ImagePart> {
  if (typeof output === 'string') return [{ type: 'text', text: output }];
  if (!Array.isArray(output)) invalid(path, 'must be a string or an array of input_text / input_image parts');
  return decodeUserContent(output, path, warnings);
}

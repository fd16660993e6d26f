import type { ImageSource } from '../canonical/request.ts';
import { invalid } from './validation.ts';

/**
 * Images as the two OpenAI formats carry them: one URL string, either an http(s) URL or a base64
 * `data:` URI.
 * @see https://platform.openai.com/docs/guides/images-vision#giving-a-model-images-as-input
 */

const DATA_URI = /^data:([^;,]+);base64,(.*)$/s;
const HTTP_URL = /^https?:\/\/\S+$/i;

/** A client's image URL → a canonical source, a `data:` URI taken apart; anything else is refused, naming `param`. */
export function decodeImageUrl(url: string, param: string): ImageSource {
  if (url.startsWith('data:')) {
    const match = DATA_URI.exec(url);
    if (!match?.[1] || !match[2]) invalid(param, 'must be a base64 data: URI (data:<media type>;base64,<data>)');
    return { kind: 'base64', mediaType: match[1], data: match[2] };
  }
  if (!HTTP_URL.test(url)) invalid(param, 'must be an http(s) URL or a data: URI');
  return { kind: 'url', url };
}

/** A canonical image source → its URL: the URL itself, or base64 data as a `data:` URI. */
export function encodeImageUrl(source: ImageSource): string {
  switch (source.kind) {
    case 'url':
      return source.url;
    case 'base64':
      return `data:${source.mediaType};base64,${source.data}`;
    default: {
      const exhaustive: never = source;
      throw new Error(`unknown image source ${JSON.stringify(exhaustive)}`);
    }
  }
}

import { payloadTooLarge, unprocessable } from '../http/errors.ts';
import { byteView } from './bytes.ts';

/**
 * Decodes base64 text as it streams by: raw base64 (standard or URL-safe alphabet, padded or
 * not, line breaks allowed) or a data URI (`data:image/png;base64,…`, whose declared type is
 * ignored: stored files are typed by their bytes). Anything else is a 422 naming `base64`, raised
 * while streaming so the bad upload is never kept.
 */
const MAX_DATA_URI_HEADER = 1024;
const ALPHABET_ONLY = /^[A-Za-z0-9+/_-]*$/;
const WHITESPACE = /[ \t\r\n]/g;

/**
 * `maxBytes` bounds the decoded file; the text is bounded too, at twice the base64 length of that
 * (line breaks and spaces are allowed, but text of whitespace alone decodes to nothing and would
 * otherwise stream without end).
 */
export function decodeBase64Stream(
  text: ReadableStream<Uint8Array>,
  maxBytes = Number.POSITIVE_INFINITY,
): ReadableStream<Uint8Array> {
  const maxTextBytes = 2 * Math.ceil(maxBytes / 3) * 4 + MAX_DATA_URI_HEADER;
  let textBytes = 0;
  /** Text held back until we know whether it starts a data URI; leading whitespace is dropped as it comes. */
  let head: string | undefined = '';
  /** Fewer than 4 characters waiting for the rest of their group. */
  let carry = '';
  let padding = 0;
  let digits = 0;

  /** Alphabet characters only: decodes every whole group of 4, keeps the rest. */
  const push = (s: string, controller: TransformStreamDefaultController<Uint8Array>) => {
    if (s.length === 0) return;
    if (padding > 0) throw invalid('characters after the "=" padding');
    digits += s.length;
    const all = carry + s;
    const whole = all.length - (all.length % 4);
    carry = all.slice(whole);
    if (whole > 0) controller.enqueue(Buffer.from(all.slice(0, whole), 'base64'));
  };

  const decodeText = (s: string, controller: TransformStreamDefaultController<Uint8Array>) => {
    if (ALPHABET_ONLY.test(s)) return push(s, controller);
    const match = /^([A-Za-z0-9+/_-]*)(=*)$/.exec(s.replace(WHITESPACE, ''));
    if (!match) {
      const bad = /[^A-Za-z0-9+/_= \t\r\n-]/.exec(s)?.[0];
      throw invalid(
        bad === undefined ? 'characters after the "=" padding' : `invalid character ${JSON.stringify(bad)}`,
      );
    }
    push(match[1] ?? '', controller);
    padding += (match[2] ?? '').length;
  };

  return text.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        textBytes += chunk.byteLength;
        if (textBytes > maxTextBytes)
          throw payloadTooLarge(`base64: longer than ${maxTextBytes} characters, more than the largest file takes`);
        let s = byteView(chunk).toString('latin1');
        if (head !== undefined) {
          // Trimmed as it grows: text of spaces alone was kept and trimmed again with every chunk.
          head = (head + s).trimStart();
          const rest = afterDataUriHeader(head);
          if (rest === undefined) return; // not sure yet
          head = undefined;
          s = rest;
        }
        decodeText(s, controller);
      },
      flush(controller) {
        if (head !== undefined) {
          const rest = afterDataUriHeader(head, true) ?? '';
          head = undefined;
          decodeText(rest, controller);
        }
        if (digits === 0) throw invalid('is empty');
        if (padding > 2 || (padding > 0 && (carry.length + padding) % 4 !== 0)) throw invalid('wrong "=" padding');
        if (carry.length === 1) throw invalid('truncated (one character too many or too few)');
        if (carry.length > 0) controller.enqueue(Buffer.from(carry, 'base64'));
      },
    }),
  );
}

/**
 * The text after a data URI's header, the whole text when it is not a data URI, or undefined
 * while too little has arrived to tell.
 */
function afterDataUriHeader(text: string, ended = false): string | undefined {
  const start = text.trimStart();
  const prefix = 'data:';
  if (start.length < prefix.length && !ended && prefix.startsWith(start.toLowerCase())) return undefined;
  if (!start.toLowerCase().startsWith(prefix)) return text;
  const comma = start.indexOf(',');
  if (comma === -1) {
    if (ended || start.length > MAX_DATA_URI_HEADER) throw invalid('a data URI needs a "," before its data');
    return undefined;
  }
  if (!/;base64$/i.test(start.slice(0, comma).trim()))
    throw invalid('a data URI must be base64-encoded ("data:<type>;base64,…")');
  return start.slice(comma + 1);
}

const invalid = (what: string) => unprocessable(`base64: ${what}`);

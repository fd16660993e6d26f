/** A response's status line and fields, as an HTTP/1.1 server sent them. */
export interface ResponseHead {
  /** 0 for HTTP/1.0, 1 for HTTP/1.1: a 1.0 answer closes its connection unless it says otherwise. */
  minorVersion: number;
  status: number;
  statusText: string;
  headers: Headers;
}

/** An answer that is not HTTP/1.1 as RFC 9112 writes it: the connection cannot be trusted further. */
export class HttpProtocolError extends Error {}

/** The longest head (status line and fields) read before the answer is refused. */
export const MAX_HEAD_BYTES = 64 * 1024;

const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: (.*))?$/;
/** RFC 9110 §5.1 token, the only characters a field name may have (sent or received). */
export const FIELD_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Parses a response head: `text` is everything before the blank line that ends it, read as
 * latin1 (field values are octets; a UTF-8 one stays as its bytes, as `fetch` keeps them).
 * Obsolete line folding, a field without a colon and a bad name are refused rather than guessed.
 * @see https://www.rfc-editor.org/rfc/rfc9112#section-4
 */
export function parseResponseHead(text: string): ResponseHead {
  const lines = text.split('\r\n');
  const match = STATUS_LINE.exec(lines[0] ?? '');
  if (!match)
    throw new HttpProtocolError(`not an HTTP/1.x status line: ${JSON.stringify((lines[0] ?? '').slice(0, 80))}`);
  const headers = new Headers();
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i] as string;
    const colon = line.indexOf(':');
    const name = colon > 0 ? line.slice(0, colon) : '';
    if (!FIELD_NAME.test(name))
      throw new HttpProtocolError(`malformed header line: ${JSON.stringify(line.slice(0, 80))}`);
    try {
      headers.append(name, line.slice(colon + 1).trim());
    } catch {
      throw new HttpProtocolError(`header ${name} has a value that is not allowed`);
    }
  }
  return {
    minorVersion: Number(match[1]),
    status: Number(match[2]),
    statusText: match[3] ?? '',
    headers,
  };
}

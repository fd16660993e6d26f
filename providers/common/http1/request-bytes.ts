import { FIELD_NAME } from './response-head.ts';

/** A request as the gateway sends it upstream: method, target, fields and an optional body. */
export interface Http1Request {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body?: string;
}

/**
 * A field value may not hold CR, LF or NUL (the request would be split), as `fetch`'s `Headers`
 * has it, nor anything past latin1 (a header is bytes; the incoming side reads them as latin1).
 */
const FIELD_VALUE = /^[^\0\r\n\u0100-\uffff]*$/;
/** Fields this client writes itself from the request's framing. */
const OWN_FIELDS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive']);
const DEFAULTS: Record<string, string> = {
  accept: '*/*',
  'accept-encoding': 'gzip, deflate, br, zstd',
  'user-agent': `Bun/${Bun.version}`,
};

/** The bytes to write: a string when they are its UTF-8 (an ASCII head), else a buffer. */
export type RequestData = string | Buffer;

/** Any character UTF-8 would write differently from latin1 (a field value's é). */
const NOT_ASCII = /[^\0-\x7f]/;

/**
 * The request's bytes, head and body in one piece (one write). A field that could not be sent
 * as given is a TypeError, as `fetch` makes it: a value from a client (a forwarded header) with a
 * line break would otherwise write a second request onto the upstream connection.
 *
 * Usually a string: the socket encodes it as it writes, where two buffers and their copy cost
 * about 2 KB of heap per call (bench/README.md). A field is latin1 on the wire, which UTF-8
 * agrees with only below 0x80, so a head with anything above goes as a buffer written in two parts.
 * @see https://www.rfc-editor.org/rfc/rfc9112#section-3
 */
export function requestBytes(request: Http1Request): RequestData {
  const { url } = request;
  let head = `${request.method} ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\n`;
  const given = new Set<string>();
  for (const name in request.headers) {
    const value = (request.headers[name] as string).trim();
    if (!FIELD_NAME.test(name)) throw new TypeError(`invalid header name ${JSON.stringify(name.slice(0, 40))}`);
    if (!FIELD_VALUE.test(value)) throw new TypeError(`header ${name} has a value that cannot be sent`);
    const lower = name.toLowerCase();
    if (OWN_FIELDS.has(lower)) continue;
    given.add(lower);
    head += `${name}: ${value}\r\n`;
  }
  for (const name in DEFAULTS) if (!given.has(name)) head += `${name}: ${DEFAULTS[name]}\r\n`;
  const body = request.body;
  if (body !== undefined) head += `content-length: ${Buffer.byteLength(body, 'utf8')}\r\n`;
  head += '\r\n';
  if (!NOT_ASCII.test(head)) return body === undefined ? head : head + body;
  // One byte per character: FIELD_VALUE holds values to latin1, and a URL serialises as ASCII.
  const headLength = head.length;
  const bytes = Buffer.allocUnsafe(headLength + (body === undefined ? 0 : Buffer.byteLength(body, 'utf8')));
  bytes.write(head, 0, 'latin1');
  if (body !== undefined) bytes.write(body, headLength, 'utf8');
  return bytes;
}

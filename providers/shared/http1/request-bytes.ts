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

/**
 * The request's bytes, head and body in one buffer (one write). A field that could not be sent
 * as given is a TypeError, as `fetch` makes it: a value from a client (a forwarded header) with a
 * line break would otherwise write a second request onto the upstream connection.
 * @see https://www.rfc-editor.org/rfc/rfc9112#section-3
 */
export function requestBytes(request: Http1Request): Buffer {
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
  if (request.body === undefined) return Buffer.from(`${head}\r\n`, 'latin1');
  const body = Buffer.from(request.body, 'utf8');
  const headBytes = Buffer.from(`${head}content-length: ${body.byteLength}\r\n\r\n`, 'latin1');
  return Buffer.concat([headBytes, body], headBytes.byteLength + body.byteLength);
}

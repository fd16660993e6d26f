import { ChunkedDecoder } from './chunked-decoder.ts';
import { HttpProtocolError, type ResponseHead } from './response-head.ts';

/** How a response's body is delimited on the connection. */
export type BodyFraming =
  | { kind: 'none' }
  | { kind: 'length'; remaining: number }
  | { kind: 'chunked'; decoder: ChunkedDecoder }
  /** Read until the server closes: the connection is not reused. */
  | { kind: 'close' };

/**
 * The body's framing and whether the connection may carry another request after it.
 * @see https://www.rfc-editor.org/rfc/rfc9112#section-6.3
 */
export function bodyFraming(head: ResponseHead, method: string): { framing: BodyFraming; reusable: boolean } {
  const connection = head.headers.get('connection')?.toLowerCase() ?? '';
  let reusable =
    head.minorVersion === 1 ? !/(^|,)\s*close\s*(,|$)/.test(connection) : /(^|,)\s*keep-alive\s*(,|$)/.test(connection);
  if (method === 'HEAD' || head.status === 204 || head.status === 304) return { framing: { kind: 'none' }, reusable };
  const transfer = head.headers.get('transfer-encoding');
  if (transfer !== null) {
    // A length beside a transfer coding is a smuggling attempt or a broken proxy: the connection ends with this answer.
    if (head.headers.has('content-length')) reusable = false;
    const codings = transfer.toLowerCase().split(',');
    if (codings[codings.length - 1]?.trim() === 'chunked')
      return { framing: { kind: 'chunked', decoder: new ChunkedDecoder() }, reusable };
    return { framing: { kind: 'close' }, reusable: false };
  }
  const length = head.headers.get('content-length');
  if (length !== null) {
    // Headers joins repeated fields with ", ": identical repeats are one length, differing ones a fault.
    const values = new Set(length.split(',').map((part) => part.trim()));
    const [only] = values;
    if (values.size !== 1 || only === undefined || !/^\d{1,15}$/.test(only))
      throw new HttpProtocolError(`bad content-length ${JSON.stringify(length.slice(0, 40))}`);
    const remaining = Number(only);
    return { framing: remaining === 0 ? { kind: 'none' } : { kind: 'length', remaining }, reusable };
  }
  return { framing: { kind: 'close' }, reusable: false };
}

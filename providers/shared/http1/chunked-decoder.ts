import { HttpProtocolError } from './response-head.ts';

/** The longest chunk-size line (with extensions) read before the body is refused. */
const MAX_SIZE_LINE = 4096;

/**
 * Decodes a `transfer-encoding: chunked` body as its bytes arrive, in any split: `push` answers
 * the data it completed (views into the input, no copy), `done` once the last chunk and its
 * trailer section have been read, and what came after them in `rest` (a pipelined answer the
 * gateway never asks for, so the caller treats it as a fault).
 * @see https://www.rfc-editor.org/rfc/rfc9112#section-7.1
 */
export class ChunkedDecoder {
  /** Bytes of the current chunk's data still to come; -1 while a size line is expected. */
  private remaining = -1;
  /** A size or trailer line split across reads. */
  private partial: Buffer | undefined;
  /** The CRLF after a chunk's data is still to be read. */
  private expectCrlf = false;
  private inTrailers = false;
  done = false;

  push(input: Buffer): { data: Buffer[]; rest?: Buffer } {
    const data: Buffer[] = [];
    const buf = this.partial ? Buffer.concat([this.partial, input]) : input;
    this.partial = undefined;
    let at = 0;
    while (at < buf.length && !this.done) {
      if (this.remaining > 0) {
        const take = Math.min(this.remaining, buf.length - at);
        data.push(buf.subarray(at, at + take));
        at += take;
        this.remaining -= take;
        if (this.remaining === 0) this.expectCrlf = true;
        continue;
      }
      const lineEnd = buf.indexOf('\r\n', at, 'latin1');
      if (lineEnd < 0) {
        if (buf.length - at > MAX_SIZE_LINE) throw new HttpProtocolError('chunk size line too long');
        this.partial = Buffer.from(buf.subarray(at));
        break;
      }
      const line = buf.toString('latin1', at, lineEnd);
      at = lineEnd + 2;
      if (this.expectCrlf) {
        if (line !== '') throw new HttpProtocolError('chunk data longer than its size');
        this.expectCrlf = false;
        this.remaining = -1;
      } else if (this.inTrailers) {
        if (line === '') this.done = true;
      } else {
        const size = line.split(';', 1)[0]?.trim() ?? '';
        if (!/^[0-9a-fA-F]{1,12}$/.test(size))
          throw new HttpProtocolError(`bad chunk size ${JSON.stringify(size.slice(0, 20))}`);
        this.remaining = Number.parseInt(size, 16);
        if (this.remaining === 0) this.inTrailers = true;
      }
    }
    return this.done && at < buf.length ? { data, rest: buf.subarray(at) } : { data };
  }
}

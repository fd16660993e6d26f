import { payloadTooLarge, unprocessable } from '../http/errors.ts';
import { byteView, concatBytes } from './bytes.ts';

/**
 * A streaming multipart/form-data reader for uploads. `request.formData()` buffers the whole body
 * (a 2 GB upload would be 2 GB of memory); this reads the body chunk by chunk, skips every part
 * before the wanted field, and hands back that part's content as a stream of the incoming chunks
 * themselves (no copies), ending where its delimiter begins.
 * @see https://www.rfc-editor.org/rfc/rfc2046#section-5.1.1  https://www.rfc-editor.org/rfc/rfc7578
 */
export interface MultipartFile {
  /** The part's `filename` parameter, when the client sent one (informational: types are sniffed). */
  filename?: string;
  /** The part's bytes as they arrive; errors when the body ends before the part's delimiter. */
  body: ReadableStream<Uint8Array>;
}

export interface MultipartOptions {
  /** Name of the form field holding the file. */
  field: string;
  /** Largest header block of one part. */
  maxHeaderBytes?: number;
  /** Everything read and dropped before the file's content (preamble, headers, other fields). */
  maxOtherBytes?: number;
}

const DEFAULT_MAX_HEADER_BYTES = 16 * 1024;
/** Non-file bytes a multipart upload may carry; the route's early Content-Length check relies on it. */
export const MULTIPART_OVERHEAD_BYTES = 1024 * 1024;

const CR = 0x0d;
const CRLF = new Uint8Array([CR, 0x0a]);
const HEADER_END = new Uint8Array([CR, 0x0a, CR, 0x0a]);

/** `boundary` of a `multipart/form-data; boundary=…` header (token or quoted string). */
export function multipartBoundary(contentType: string): string {
  const match = /;\s*boundary\s*=\s*(?:"((?:[^"\\\r\n]|\\.){1,200})"|([^;\s"]{1,200}))/i.exec(contentType);
  const boundary = match?.[1]?.replace(/\\(.)/g, '$1') ?? match?.[2];
  if (!boundary) throw unprocessable('content-type: multipart/form-data needs a boundary parameter');
  return boundary;
}

export async function openMultipartFile(
  body: ReadableStream<Uint8Array>,
  boundary: string,
  opts: MultipartOptions,
): Promise<MultipartFile> {
  const parser = new MultipartParser(body.getReader(), boundary, opts);
  try {
    return await parser.findFile();
  } catch (err) {
    await parser.cancel(err);
    throw err;
  }
}

class MultipartParser {
  /** `CRLF--boundary`: every delimiter, the first one included once we pretend the body starts with CRLF. */
  private readonly delimiter: Buffer;
  /** Bytes read but not yet consumed. */
  private buf: Uint8Array = CRLF;
  private other = 0;
  private readonly maxHeaderBytes: number;
  private readonly maxOtherBytes: number;

  constructor(
    private readonly reader: ReadableStreamDefaultReader<Uint8Array>,
    boundary: string,
    private readonly opts: MultipartOptions,
  ) {
    this.delimiter = Buffer.from(`\r\n--${boundary}`, 'latin1');
    this.maxHeaderBytes = opts.maxHeaderBytes ?? DEFAULT_MAX_HEADER_BYTES;
    this.maxOtherBytes = opts.maxOtherBytes ?? MULTIPART_OVERHEAD_BYTES;
  }

  async findFile(): Promise<MultipartFile> {
    // Preamble: whatever comes before the first delimiter is dropped.
    await this.skipToDelimiter();
    for (;;) {
      if (await this.atCloseDelimiter()) throw unprocessable(`${this.opts.field}: multipart field is required`);
      const headers = parseHeaders(await this.readHeaderBlock());
      const disposition = parseDisposition(headers.get('content-disposition') ?? '');
      if (disposition.name === this.opts.field) {
        return { filename: disposition.filename, body: this.partStream() };
      }
      await this.skipToDelimiter();
    }
  }

  async cancel(reason: unknown): Promise<void> {
    await this.reader.cancel(reason).catch(() => undefined);
  }

  private async drain(): Promise<void> {
    try {
      this.countOther(this.buf.byteLength);
      for (;;) {
        const { done, value } = await this.reader.read();
        if (done) return;
        this.countOther(value.byteLength);
      }
    } catch (err) {
      await this.cancel(err);
    }
  }

  /** Reads one more chunk onto the unconsumed bytes; false at the end of the body. */
  private async more(): Promise<boolean> {
    const { done, value } = await this.reader.read();
    if (done) return false;
    // Usually nothing is left over (or only a few bytes that may start a delimiter): no copy.
    this.buf = this.buf.byteLength === 0 ? value : concatBytes(this.buf, value);
    return true;
  }

  private countOther(n: number): void {
    this.other += n;
    if (this.other > this.maxOtherBytes) {
      throw payloadTooLarge(`multipart parts other than ${this.opts.field} are limited to ${this.maxOtherBytes} bytes`);
    }
  }

  /**
   * Consumes what is before the next delimiter: the bytes that surely belong to the content come
   * back now, a tail that could be the start of a delimiter split across chunks is kept.
   */
  private scan(): { data: Uint8Array; found: boolean } {
    const view = byteView(this.buf);
    const at = view.indexOf(this.delimiter);
    if (at !== -1) {
      const data = this.buf.subarray(0, at);
      this.buf = this.buf.subarray(at + this.delimiter.byteLength);
      return { data, found: true };
    }
    const keep = partialDelimiterAtEnd(this.buf, this.delimiter);
    const data = this.buf.subarray(0, this.buf.byteLength - keep);
    this.buf = this.buf.subarray(this.buf.byteLength - keep);
    return { data, found: false };
  }

  private async skipToDelimiter(): Promise<void> {
    for (;;) {
      const { data, found } = this.scan();
      this.countOther(data.byteLength);
      if (found) return;
      if (!(await this.more())) throw truncated(this.opts.field);
    }
  }

  /** After a delimiter: `--` closes the body; otherwise optional padding and CRLF start a part. */
  private async atCloseDelimiter(): Promise<boolean> {
    for (;;) {
      const view = byteView(this.buf);
      if (this.buf.byteLength >= 2 && this.buf[0] === 0x2d && this.buf[1] === 0x2d) return true;
      const eol = view.indexOf(CRLF);
      if (eol !== -1) {
        // RFC 2046 lets a delimiter line end with "transport padding" (spaces and tabs).
        if (!/^[ \t]*$/.test(view.toString('latin1', 0, eol))) throw malformed('bad delimiter line');
        this.countOther(eol + 2);
        this.buf = this.buf.subarray(eol + 2);
        return false;
      }
      if (this.buf.byteLength > 256) throw malformed('bad delimiter line');
      if (!(await this.more())) throw truncated(this.opts.field);
    }
  }

  private async readHeaderBlock(): Promise<string> {
    for (;;) {
      const view = byteView(this.buf);
      // A part may have no headers at all: its blank line follows the delimiter line at once.
      if (this.buf.byteLength >= 2 && this.buf[0] === CR && this.buf[1] === 0x0a) {
        this.buf = this.buf.subarray(2);
        this.countOther(2);
        return '';
      }
      const end = view.indexOf(HEADER_END);
      if (end !== -1) {
        if (end > this.maxHeaderBytes)
          throw payloadTooLarge(`multipart part headers are limited to ${this.maxHeaderBytes} bytes`);
        // Header values are ISO-8859-1 by HTTP's rules; browsers send UTF-8 file names, decoded below.
        const text = view.toString('utf8', 0, end);
        this.countOther(end + 4);
        this.buf = this.buf.subarray(end + 4);
        return text;
      }
      if (this.buf.byteLength > this.maxHeaderBytes)
        throw payloadTooLarge(`multipart part headers are limited to ${this.maxHeaderBytes} bytes`);
      if (!(await this.more())) throw truncated(this.opts.field);
    }
  }

  /** The wanted part's content, pulled from the request as the consumer reads. */
  private partStream(): ReadableStream<Uint8Array> {
    return new ReadableStream<Uint8Array>(
      {
        pull: async (controller) => {
          for (;;) {
            const { data, found } = this.scan();
            if (found) {
              if (data.byteLength > 0) controller.enqueue(data);
              controller.close();
              // The rest (closing delimiter, later fields) is read and dropped, so the request
              // ends normally; past the non-file allowance we stop reading it.
              void this.drain();
              return;
            }
            if (data.byteLength > 0) return controller.enqueue(data);
            if (!(await this.more())) return controller.error(truncated(this.opts.field));
          }
        },
        cancel: (reason) => this.cancel(reason),
      },
      { highWaterMark: 0 },
    );
  }
}

/**
 * Length of the longest tail of `buf` that is a proper prefix of `delimiter`: those bytes may be
 * the first half of a delimiter split across two chunks. Delimiters start with CR, so only CRs
 * near the end are candidates.
 */
export function partialDelimiterAtEnd(buf: Uint8Array, delimiter: Uint8Array): number {
  const from = Math.max(0, buf.byteLength - delimiter.byteLength + 1);
  for (let start = from; start < buf.byteLength; start++) {
    if (buf[start] !== delimiter[0]) continue;
    let i = 1;
    while (start + i < buf.byteLength && buf[start + i] === delimiter[i]) i++;
    if (start + i === buf.byteLength) return buf.byteLength - start;
  }
  return 0;
}

function parseHeaders(block: string): Map<string, string> {
  const headers = new Map<string, string>();
  for (const line of block.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return headers;
}

/** `form-data; name="file"; filename="a.png"` → its name and filename. */
function parseDisposition(value: string): { name?: string; filename?: string } {
  const params: Record<string, string> = {};
  for (const match of value.matchAll(/;\s*([^=;\s]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]*))/g)) {
    const key = (match[1] ?? '').toLowerCase();
    params[key] = match[2] !== undefined ? match[2].replace(/\\(.)/g, '$1') : (match[3] ?? '').trim();
  }
  return { name: params.name, filename: params.filename };
}

const malformed = (what: string) => unprocessable(`request body is not valid multipart/form-data: ${what}`);
const truncated = (field: string) => unprocessable(`${field}: multipart body ended before the part was complete`);

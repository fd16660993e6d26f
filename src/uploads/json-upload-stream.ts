import { payloadTooLarge, unprocessable } from '../http/errors.ts';
import { byteView, concatBytes } from './bytes.ts';

/**
 * Reads the JSON body of an upload, `{"base64": "…"}` or `{"file_url": "…"}`, without holding
 * the base64 text in memory: the object is scanned as it arrives and the base64 string's
 * characters are handed on as a stream the moment its value starts. What follows the string is
 * still checked (valid JSON, no second variant) before that stream ends, so a bad body never
 * becomes a stored file. Other members are parsed and ignored, as a JSON API would.
 */
export type JsonUpload = { kind: 'base64'; text: ReadableStream<Uint8Array> } | { kind: 'file_url'; url: string };

const MAX_KEY_CHARS = 256;
/** URLs beyond this are not real download links. */
const MAX_URL_CHARS = 8192;
/** Strings of ignored members: they are read into memory, so they stay small. */
const MAX_OTHER_STRING_CHARS = 16 * 1024;
/**
 * Bytes of the body outside the base64 string (the other members, whitespace): they are scanned
 * a token at a time, so without a bound a chunked body of padding held the event loop for
 * seconds and was counted against no limit. 413 past it, as for a multipart body's other parts.
 */
export const MAX_JSON_OTHER_BYTES = 64 * 1024;
const MAX_DEPTH = 32;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const ESCAPES: Record<number, string> = {
  34: '"',
  92: '\\',
  47: '/',
  98: '\b',
  102: '\f',
  110: '\n',
  114: '\r',
  116: '\t',
};

export async function openJsonUpload(body: ReadableStream<Uint8Array>): Promise<JsonUpload> {
  const scanner = new JsonScanner(body.getReader());
  try {
    return await scanner.open();
  } catch (err) {
    await scanner.cancel(err);
    throw err;
  }
}

class JsonScanner {
  private buf: Uint8Array = new Uint8Array(0);
  private pos = 0;
  /** Bytes dropped from `buf` so far: `consumed + pos` is the offset in the body, for messages. */
  private consumed = 0;
  private ended = false;
  /** Bytes of the base64 string's content read so far: what the other-bytes bound leaves out. */
  private fileBytes = 0;

  constructor(private readonly reader: ReadableStreamDefaultReader<Uint8Array>) {}

  async cancel(reason: unknown): Promise<void> {
    await this.reader.cancel(reason).catch(() => undefined);
  }

  async open(): Promise<JsonUpload> {
    await this.skipWhitespace();
    await this.expect(0x7b); // {
    let url: string | undefined;
    await this.skipWhitespace();
    if ((await this.peek()) === 0x7d) {
      this.pos++;
    } else {
      for (;;) {
        const key = await this.member();
        if (key === 'base64') {
          if (url !== undefined) throw bothVariants();
          if ((await this.peek()) !== QUOTE) throw unprocessable('base64: expected a string');
          this.pos++;
          this.fileBytes++; // the opening quote: the string's bytes are the upload's, bounded by its size
          return { kind: 'base64', text: this.stringStream(() => this.restAfterBase64()) };
        }
        if (key === 'file_url') {
          if (url !== undefined) throw unprocessable('file_url: given twice');
          if ((await this.peek()) !== QUOTE) throw unprocessable('file_url: expected a string');
          url = await this.readString(MAX_URL_CHARS, 'file_url');
        } else {
          await this.skipValue(0);
        }
        if (await this.endOfMembers()) break;
      }
    }
    await this.expectEnd();
    if (url === undefined) throw unprocessable('base64 or file_url is required');
    return { kind: 'file_url', url };
  }

  /** After the base64 string: more members (none of them a variant), `}`, then nothing. */
  private async restAfterBase64(): Promise<void> {
    while (!(await this.endOfMembers())) {
      const key = await this.member();
      if (key === 'base64') throw unprocessable('base64: given twice');
      if (key === 'file_url') throw bothVariants();
      await this.skipValue(0);
    }
    await this.expectEnd();
  }

  /** `"key" :` — returns the key with the cursor on the value. */
  private async member(): Promise<string> {
    await this.skipWhitespace();
    if ((await this.peek()) !== QUOTE) throw this.invalid();
    const key = await this.readString(MAX_KEY_CHARS, 'member name');
    await this.skipWhitespace();
    await this.expect(0x3a); // :
    await this.skipWhitespace();
    return key;
  }

  /** After a member's value: `,` → false (another member follows), `}` → true. */
  private async endOfMembers(): Promise<boolean> {
    await this.skipWhitespace();
    const c = await this.peek();
    if (c === 0x2c) {
      this.pos++;
      return false;
    }
    if (c === 0x7d) {
      this.pos++;
      return true;
    }
    throw this.invalid();
  }

  private async expectEnd(): Promise<void> {
    await this.skipWhitespace();
    if ((await this.peek()) !== undefined) throw this.invalid();
  }

  // ── bytes ────────────────────────────────────────────────────────────────

  /** Makes at least `n` unread bytes available; false when the body ends first. */
  private async ensure(n: number): Promise<boolean> {
    while (this.buf.byteLength - this.pos < n) {
      if (this.ended) return false;
      const { done, value } = await this.reader.read();
      if (done) {
        this.ended = true;
        return false;
      }
      const rest = this.buf.subarray(this.pos);
      this.consumed += this.pos;
      this.buf = rest.byteLength === 0 ? value : concatBytes(rest, value);
      this.pos = 0;
    }
    return true;
  }

  /** The next byte outside the base64 string (undefined at the end); past the bound on those bytes, 413. */
  private async peek(): Promise<number | undefined> {
    if (this.consumed + this.pos - this.fileBytes > MAX_JSON_OTHER_BYTES)
      throw payloadTooLarge(`JSON members other than base64 are limited to ${MAX_JSON_OTHER_BYTES} bytes`);
    if (this.pos < this.buf.byteLength) return this.buf[this.pos];
    return (await this.ensure(1)) ? this.buf[this.pos] : undefined;
  }

  private async expect(byte: number): Promise<void> {
    if ((await this.peek()) !== byte) throw this.invalid();
    this.pos++;
  }

  private async skipWhitespace(): Promise<void> {
    for (;;) {
      // The bytes at hand without a promise each; `peek` then bounds them and reads on.
      const buf = this.buf;
      while (this.pos < buf.byteLength && isWhitespace(buf[this.pos] as number)) this.pos++;
      if (!isWhitespace((await this.peek()) ?? 0)) return;
    }
  }

  private invalid(): Error {
    const at = this.consumed + this.pos;
    const c = this.buf[this.pos];
    const what = c === undefined ? 'unexpected end' : `unexpected ${JSON.stringify(String.fromCharCode(c))}`;
    return unprocessable(`request body is not valid JSON (${what} at byte ${at})`);
  }

  // ── strings ──────────────────────────────────────────────────────────────

  /** An escape after its backslash: the characters it stands for. */
  private async escape(): Promise<string> {
    if (!(await this.ensure(1))) throw this.invalid();
    const c = this.buf[this.pos] as number;
    const simple = ESCAPES[c];
    if (simple !== undefined) {
      this.pos++;
      return simple;
    }
    if (c !== 0x75) throw this.invalid(); // u
    if (!(await this.ensure(5))) throw this.invalid();
    const hex = byteView(this.buf).toString('latin1', this.pos + 1, this.pos + 5);
    if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw this.invalid();
    this.pos += 5;
    // A lone surrogate half stays a UTF-16 unit here; paired halves join in the JS string.
    return String.fromCharCode(Number.parseInt(hex, 16));
  }

  /** A whole string, read into memory; the cursor is on its opening quote. */
  private async readString(maxChars: number, field: string): Promise<string> {
    this.pos++; // opening quote
    let out = '';
    const decoder = new TextDecoder('utf-8', { fatal: true });
    for (;;) {
      if (!(await this.ensure(1))) throw this.invalid();
      const c = this.buf[this.pos] as number;
      if (c === QUOTE) {
        this.pos++;
        return out + decodeOrThrow(decoder);
      }
      if (c === BACKSLASH) {
        this.pos++;
        out += decodeOrThrow(decoder) + (await this.escape());
      } else {
        if (c < 0x20) throw this.invalid();
        // The run up to the next quote, backslash or control byte at hand, decoded at once
        // (a run longer than the string may be is cut where it would be refused anyway).
        const buf = this.buf;
        const stop = Math.min(buf.byteLength, this.pos + 4 * (maxChars + 1));
        let end = this.pos + 1;
        while (end < stop) {
          const b = buf[end] as number;
          if (b === QUOTE || b === BACKSLASH || b < 0x20) break;
          end++;
        }
        out += decodeOrThrow(decoder, buf.subarray(this.pos, end));
        this.pos = end;
      }
      if (out.length > maxChars) throw unprocessable(`${field}: longer than ${maxChars} characters`);
    }
  }

  /**
   * The current string's content as bytes, escapes resolved, without holding it: runs between
   * escapes are handed on as views of the incoming chunks. `after` runs once the closing quote
   * is passed and may throw, which errors the stream instead of ending it.
   */
  private stringStream(after: () => Promise<void>): ReadableStream<Uint8Array> {
    const encoder = new TextEncoder();
    // Positions of the next quote/backslash, cached per chunk: escapes can be dense ("\/" for
    // every "/" of some encoders), and rescanning the chunk for each would be quadratic.
    let cachedBuf: Uint8Array | undefined;
    let nextQuote = -1;
    let nextBackslash = -1;
    const find = (byte: number, from: number, cached: number) =>
      cached >= from ? cached : byteView(this.buf).indexOf(byte, from);
    return new ReadableStream<Uint8Array>(
      {
        pull: async (controller) => {
          try {
            if (!(await this.ensure(1))) throw this.invalid();
            if (cachedBuf !== this.buf) {
              cachedBuf = this.buf;
              nextQuote = -1;
              nextBackslash = -1;
            }
            nextQuote = find(QUOTE, this.pos, nextQuote);
            nextBackslash = find(BACKSLASH, this.pos, nextBackslash);
            if (nextQuote === -1) nextQuote = Number.POSITIVE_INFINITY;
            if (nextBackslash === -1) nextBackslash = Number.POSITIVE_INFINITY;
            const special = Math.min(nextQuote, nextBackslash, this.buf.byteLength);
            if (special > this.pos) {
              controller.enqueue(this.buf.subarray(this.pos, special));
              this.fileBytes += special - this.pos;
              this.pos = special;
              return;
            }
            this.pos++;
            if (special === nextQuote) {
              this.fileBytes++; // the closing quote, as the opening one
              await after();
              controller.close();
              return;
            }
            const from = this.consumed + this.pos;
            controller.enqueue(encoder.encode(await this.escape()));
            this.fileBytes += this.consumed + this.pos - from + 1;
          } catch (err) {
            controller.error(err);
            await this.cancel(err);
          }
        },
        cancel: (reason) => this.cancel(reason),
      },
      { highWaterMark: 0 },
    );
  }

  // ── values we ignore ─────────────────────────────────────────────────────

  private async skipValue(depth: number): Promise<void> {
    if (depth > MAX_DEPTH) throw unprocessable(`request body nests deeper than ${MAX_DEPTH} levels`);
    const c = await this.peek();
    if (c === QUOTE) {
      await this.readString(MAX_OTHER_STRING_CHARS, 'string value');
      return;
    }
    if (c === 0x7b || c === 0x5b) {
      const close = c === 0x7b ? 0x7d : 0x5d;
      this.pos++;
      await this.skipWhitespace();
      if ((await this.peek()) === close) {
        this.pos++;
        return;
      }
      for (;;) {
        if (c === 0x7b) await this.member();
        await this.skipValue(depth + 1);
        await this.skipWhitespace();
        const next = await this.peek();
        this.pos++;
        if (next === close) return;
        if (next !== 0x2c) {
          this.pos--;
          throw this.invalid();
        }
        await this.skipWhitespace();
      }
    }
    // true, false, null or a number: read the token and let JSON.parse judge it.
    let token = '';
    for (;;) {
      const b = await this.peek();
      if (b === undefined || !/[-+.0-9a-zA-Z]/.test(String.fromCharCode(b))) break;
      token += String.fromCharCode(b);
      this.pos++;
      if (token.length > 64) throw this.invalid();
    }
    try {
      JSON.parse(token);
    } catch {
      throw this.invalid();
    }
  }
}

const isWhitespace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

/** More bytes (or the end) through a fatal UTF-8 decoder; invalid UTF-8 is invalid JSON. */
function decodeOrThrow(decoder: TextDecoder, byte?: Uint8Array): string {
  try {
    return byte ? decoder.decode(byte, { stream: true }) : decoder.decode();
  } catch {
    throw unprocessable('request body is not valid JSON (invalid UTF-8 in a string)');
  }
}

const bothVariants = () => unprocessable('give either base64 or file_url, not both');

import { HttpProtocolError } from './response-head.ts';

/** The longest chunk-size line (with extensions), or trailer line, read before the body is refused. */
const MAX_SIZE_LINE = 4096;
/** Hex digits of a chunk size: 16^12 bytes is past any body, and still exact in a `number`. */
const MAX_SIZE_DIGITS = 12;

const CR = 13;
const LF = 10;
const SP = 32;
const TAB = 9;
const SEMICOLON = 59;

/** Where the decoder is in the body's grammar; each state resumes at any byte a read ends on. */
const State = {
  /** The chunk size's hex digits (spaces before them tolerated). */
  Size: 0,
  /** After the size: spaces, then `;` extensions or the line's end. */
  AfterSize: 1,
  /** A chunk extension: skipped up to the line's CR. */
  Extension: 2,
  /** The LF after a size line's CR. */
  SizeLf: 3,
  /** The chunk's data. */
  Data: 4,
  /** The CR after a chunk's data. */
  DataCr: 5,
  /** The LF after a chunk's data. */
  DataLf: 6,
  /** A trailer line (skipped), or the blank line that ends the body. */
  Trailer: 7,
  /** The LF after a trailer line's CR. */
  TrailerLf: 8,
  Done: 9,
} as const;
type State = (typeof State)[keyof typeof State];

function hexValue(byte: number): number {
  if (byte >= 48 && byte <= 57) return byte - 48;
  if (byte >= 97 && byte <= 102) return byte - 87;
  if (byte >= 65 && byte <= 70) return byte - 55;
  return -1;
}

/**
 * Decodes a `transfer-encoding: chunked` body as its bytes arrive, in any split: `push` answers
 * the data one read completed as one buffer (a view into the input when it is one piece, else a
 * copy of its pieces), `done` once the last chunk and its trailer section have been read, and
 * what came after them in `rest` (a pipelined answer the gateway never asks for, so the caller
 * treats it as a fault). It reads bytes, not lines: a fast upstream's stream comes as dozens of
 * chunks in one read, and a string, an array and a view per chunk were most of its heap.
 * @see https://www.rfc-editor.org/rfc/rfc9112#section-7.1
 */
export class ChunkedDecoder {
  private state: State = State.Size;
  /** The size being read, then the bytes of the current chunk's data still to come. */
  private remaining = 0;
  private digits = 0;
  /** Bytes of the current size or trailer line so far. */
  private lineLength = 0;
  done = false;
  /** What followed the body's end in the read that ended it. */
  rest: Buffer | undefined;

  push(input: Buffer): Buffer | undefined {
    let firstStart = -1;
    let firstEnd = -1;
    let joined: Buffer | undefined;
    let joinedLength = 0;
    let at = 0;
    const length = input.length;
    while (at < length) {
      if (this.state === State.Data) {
        const end = Math.min(length, at + this.remaining);
        if (firstStart < 0) {
          firstStart = at;
          firstEnd = end;
        } else {
          if (!joined) {
            // A second piece in this read: the pieces are copied into one buffer (at most the read's size).
            joined = Buffer.allocUnsafe(length);
            joinedLength = input.copy(joined, 0, firstStart, firstEnd);
          }
          joinedLength += input.copy(joined, joinedLength, at, end);
        }
        this.remaining -= end - at;
        at = end;
        if (this.remaining === 0) this.state = State.DataCr;
        continue;
      }
      if (this.state === State.Done) break;
      this.step(input[at] as number);
      at++;
    }
    if (this.done && at < length) this.rest = input.subarray(at);
    if (joined) return joined.subarray(0, joinedLength);
    return firstStart < 0 ? undefined : input.subarray(firstStart, firstEnd);
  }

  /** One byte of a size line, of the CRLF after data, or of the trailer section. */
  private step(byte: number): void {
    switch (this.state) {
      case State.Size: {
        if (++this.lineLength > MAX_SIZE_LINE) throw new HttpProtocolError('chunk size line too long');
        const value = hexValue(byte);
        if (value >= 0) {
          if (++this.digits > MAX_SIZE_DIGITS) throw new HttpProtocolError('chunk size has too many digits');
          this.remaining = this.remaining * 16 + value;
          return;
        }
        if ((byte === SP || byte === TAB) && this.digits === 0) return;
        if (this.digits === 0) throw new HttpProtocolError(`bad chunk size (byte ${byte})`);
        this.afterSize(byte);
        return;
      }
      case State.AfterSize:
        if (++this.lineLength > MAX_SIZE_LINE) throw new HttpProtocolError('chunk size line too long');
        this.afterSize(byte);
        return;
      case State.Extension:
        if (++this.lineLength > MAX_SIZE_LINE) throw new HttpProtocolError('chunk size line too long');
        if (byte === CR) this.state = State.SizeLf;
        return;
      case State.SizeLf:
        if (byte !== LF) throw new HttpProtocolError('chunk size line not ended by CRLF');
        this.lineLength = 0;
        this.digits = 0;
        if (this.remaining > 0) this.state = State.Data;
        else this.state = State.Trailer;
        return;
      case State.DataCr:
        if (byte !== CR) throw new HttpProtocolError('chunk data longer than its size');
        this.state = State.DataLf;
        return;
      case State.DataLf:
        if (byte !== LF) throw new HttpProtocolError('chunk data longer than its size');
        this.state = State.Size;
        return;
      case State.Trailer:
        if (byte === CR) {
          this.state = State.TrailerLf;
          return;
        }
        if (++this.lineLength > MAX_SIZE_LINE) throw new HttpProtocolError('trailer line too long');
        return;
      case State.TrailerLf: {
        if (byte !== LF) throw new HttpProtocolError('trailer line not ended by CRLF');
        // A blank line ends the trailer section, and the body with it.
        const blank = this.lineLength === 0;
        this.lineLength = 0;
        if (blank) {
          this.state = State.Done;
          this.done = true;
        } else this.state = State.Trailer;
        return;
      }
      case State.Data:
      case State.Done:
        return;
      default:
        this.state satisfies never;
    }
  }

  /** After the size's digits: optional spaces, then `;` and extensions, or the line's end. */
  private afterSize(byte: number): void {
    if (byte === SP || byte === TAB) this.state = State.AfterSize;
    else if (byte === SEMICOLON) this.state = State.Extension;
    else if (byte === CR) this.state = State.SizeLf;
    else throw new HttpProtocolError(`bad chunk size (byte ${byte} after its digits)`);
  }
}

import { describe, expect, test } from 'bun:test';
import { multipartBoundary, openMultipartFile, partialDelimiterAtEnd } from '../../src/uploads/multipart-stream.ts';
import { rejection } from '../helpers/rejection.ts';

const enc = (s: string) => new TextEncoder().encode(s);
const concat = (...parts: Array<string | Uint8Array>) => {
  const bytes = parts.map((p) => (typeof p === 'string' ? enc(p) : p));
  const out = new Uint8Array(bytes.reduce((n, b) => n + b.byteLength, 0));
  let at = 0;
  for (const b of bytes) out.set(b, (at += b.byteLength) - b.byteLength);
  return out;
};

/** `body` as a stream cut at the given offsets. */
function chunked(body: Uint8Array, cuts: number[]): ReadableStream<Uint8Array> {
  const points = [0, ...cuts.filter((c) => c > 0 && c < body.byteLength).sort((a, b) => a - b), body.byteLength];
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (i >= points.length - 1) return controller.close();
      // A copy, so no test passes by accident through shared memory.
      controller.enqueue(body.slice(points[i], points[i + 1]));
      i++;
    },
  });
}

async function fileOf(body: Uint8Array, boundary: string, cuts: number[] = []) {
  const file = await openMultipartFile(chunked(body, cuts), boundary, { field: 'file' });
  return { filename: file.filename, bytes: new Uint8Array(await new Response(file.body).arrayBuffer()) };
}

const B = 'XyZ-boundary-123';
/** Binary content with CRLFs, dashes and almost-delimiters in it. */
const TRICKY = concat(
  '\r\n',
  '--',
  `\r\n--${B.slice(0, 8)}`,
  new Uint8Array([0, 255, 13, 10, 13]),
  `--${B}`,
  '\r\n-',
  `\r\r\n--${B.slice(0, -1)}x`,
  '\r',
);

function form(content: Uint8Array, boundary = B) {
  return concat(
    'preamble to ignore\r\n',
    `--${boundary}\r\n`,
    'Content-Disposition: form-data; name="note"\r\n\r\n',
    'a text field\r\nwith two lines',
    `\r\n--${boundary}  \r\n`, // transport padding after the delimiter
    'Content-Disposition: form-data; name="file"; filename="pic \\"1\\".png"\r\n',
    'Content-Type: image/png\r\n\r\n',
    content,
    `\r\n--${boundary}\r\n`,
    'Content-Disposition: form-data; name="after"\r\n\r\nlater\r\n',
    `--${boundary}--\r\nepilogue`,
  );
}

describe('streaming multipart parser', () => {
  test('yields exactly the file part, split at every byte boundary', async () => {
    const body = form(TRICKY);
    for (let cut = 0; cut <= body.byteLength; cut++) {
      const { bytes, filename } = await fileOf(body, B, [cut]);
      expect(bytes).toEqual(TRICKY);
      expect(filename).toBe('pic "1".png');
    }
  });

  test('one byte per chunk, and random multi-cut splits', async () => {
    const body = form(TRICKY);
    expect(
      (
        await fileOf(
          body,
          B,
          Array.from({ length: body.byteLength }, (_, i) => i),
        )
      ).bytes,
    ).toEqual(TRICKY);
    for (let round = 0; round < 200; round++) {
      const cuts = Array.from({ length: 1 + (round % 7) }, () => Math.floor(Math.random() * body.byteLength));
      expect((await fileOf(body, B, cuts)).bytes).toEqual(TRICKY);
    }
  });

  test('large random binary content with planted CRLFs and boundary prefixes, in odd chunk sizes', async () => {
    const content = crypto.getRandomValues(new Uint8Array(300_000));
    // Every proper prefix of the delimiter, followed by a byte no boundary has.
    for (let i = 0; i < content.length - 40; i += 997) content.set(enc(`\r\n--${B.slice(0, i % B.length)}\0`), i);
    const body = form(content);
    const cuts: number[] = [];
    for (let at = 0; at < body.byteLength; at += 1 + ((at * 7919) % 8191)) cuts.push(at);
    expect((await fileOf(body, B, cuts)).bytes).toEqual(content);
  });

  test('a file part first, with no preamble and no headers other than its disposition', async () => {
    const body = concat(`--${B}\r\n`, 'content-disposition: form-data; name=file\r\n\r\n', 'abc', `\r\n--${B}--`);
    expect((await fileOf(body, B)).bytes).toEqual(enc('abc'));
    const empty = concat(`--${B}\r\n`, 'Content-Disposition: form-data; name="file"\r\n\r\n', `\r\n--${B}--\r\n`);
    expect((await fileOf(empty, B)).bytes).toEqual(new Uint8Array(0));
  });

  test('missing field, truncated body, oversized headers and fields are errors', async () => {
    const noFile = concat(`--${B}\r\n`, 'Content-Disposition: form-data; name="other"\r\n\r\nx', `\r\n--${B}--\r\n`);
    expect(await rejection(fileOf(noFile, B))).toMatchObject({
      status: 422,
      message: 'file: multipart field is required',
    });

    const whole = form(TRICKY);
    const cut = whole.subarray(0, Buffer.from(whole).indexOf(TRICKY) + 10);
    const truncated = await openMultipartFile(chunked(cut, [50]), B, { field: 'file' });
    expect(await rejection(new Response(truncated.body).arrayBuffer())).toMatchObject({
      status: 422,
      message: 'file: multipart body ended before the part was complete',
    });

    expect(await rejection(fileOf(enc('no delimiter at all'), B))).toMatchObject({ status: 422 });

    const hugeHeader = concat(
      `--${B}\r\n`,
      `X-Pad: ${'a'.repeat(20_000)}\r\n`,
      'Content-Disposition: form-data; name="file"\r\n\r\nx',
      `\r\n--${B}--`,
    );
    expect(await rejection(fileOf(hugeHeader, B))).toMatchObject({ status: 413 });

    const bigField = concat(
      `--${B}\r\n`,
      'Content-Disposition: form-data; name="x"\r\n\r\n',
      new Uint8Array(2 * 1024 * 1024),
      `\r\n--${B}\r\n`,
      'Content-Disposition: form-data; name="file"\r\n\r\nx',
      `\r\n--${B}--`,
    );
    expect(await rejection(fileOf(bigField, B, [1000, 600_000]))).toMatchObject({ status: 413 });
  });

  test('boundary parameter: token, quoted, missing', () => {
    expect(multipartBoundary('multipart/form-data; boundary=----WebKitFormBoundary7MA4YWxk')).toBe(
      '----WebKitFormBoundary7MA4YWxk',
    );
    expect(multipartBoundary('multipart/form-data; charset=utf-8; boundary="a b:c"')).toBe('a b:c');
    expect(() => multipartBoundary('multipart/form-data')).toThrow(
      'content-type: multipart/form-data needs a boundary parameter',
    );
  });

  test('partial delimiter at the end of a chunk', () => {
    const delim = enc('\r\n--abc');
    expect(partialDelimiterAtEnd(enc('xx\r\n--a'), delim)).toBe(5);
    expect(partialDelimiterAtEnd(enc('xx\r'), delim)).toBe(1);
    expect(partialDelimiterAtEnd(enc('xx\r\n-x'), delim)).toBe(0);
    expect(partialDelimiterAtEnd(enc('\r\r\n--ab'), delim)).toBe(6);
    expect(partialDelimiterAtEnd(enc(''), delim)).toBe(0);
  });
});

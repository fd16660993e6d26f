import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { bodyFraming } from '../../providers/common/http1/body-framing.ts';
import { ChunkedDecoder } from '../../providers/common/http1/chunked-decoder.ts';
import { requestBytes } from '../../providers/common/http1/request-bytes.ts';
import { HttpProtocolError, parseResponseHead } from '../../providers/common/http1/response-head.ts';

/** `data` in chunked coding, cut into chunks of `sizes` (cycled), with a trailer section. */
function chunked(data: Buffer, sizes: number[], trailer = ''): Buffer {
  const parts: Buffer[] = [];
  for (let at = 0, i = 0; at < data.length; i++) {
    const size = Math.max(1, sizes[i % sizes.length] as number);
    const piece = data.subarray(at, at + size);
    parts.push(Buffer.from(`${piece.length.toString(16)};ext=1\r\n`), piece, Buffer.from('\r\n'));
    at += piece.length;
  }
  return Buffer.concat([...parts, Buffer.from(`0\r\n${trailer}\r\n`)]);
}

/** Feeds `wire` to a decoder in pieces cut at `cuts`; answers the data and what came after the end. */
function decode(wire: Buffer, cuts: number[]): { data: Buffer; rest: Buffer; done: boolean } {
  const decoder = new ChunkedDecoder();
  const data: Buffer[] = [];
  let rest = Buffer.alloc(0);
  const points = [...new Set(cuts.map((c) => c % (wire.length + 1)))].sort((a, b) => a - b);
  let from = 0;
  for (const to of [...points, wire.length]) {
    if (to <= from) continue;
    const out = decoder.push(wire.subarray(from, to));
    if (out) data.push(Buffer.from(out));
    if (decoder.rest) rest = Buffer.concat([rest, decoder.rest]);
    from = to;
  }
  return { data: Buffer.concat(data), rest, done: decoder.done };
}

describe('chunked bodies', () => {
  test('any body in any chunk sizes, cut at any byte boundaries, decodes to itself', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 3000 }),
        fc.array(fc.integer({ min: 1, max: 700 }), { minLength: 1, maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 40 }),
        fc.boolean(),
        (bytes, sizes, cuts, withTrailer) => {
          const data = Buffer.from(bytes);
          const wire = chunked(data, sizes, withTrailer ? 'x-checksum: 1\r\n' : '');
          const out = decode(wire, cuts);
          expect(out.done).toBe(true);
          expect(out.data.equals(data)).toBe(true);
          expect(out.rest.length).toBe(0);
        },
      ),
      { numRuns: 300 },
    );
  });

  test('bytes after the last chunk are handed back, never taken as data', () => {
    const out = decode(Buffer.concat([chunked(Buffer.from('hello'), [2]), Buffer.from('HTTP/1.1 200 OK\r\n')]), [3, 9]);
    expect(out.data.toString()).toBe('hello');
    expect(out.rest.toString()).toBe('HTTP/1.1 200 OK\r\n');
  });

  test('property: any bytes an upstream sends, cut anywhere, decode or are refused as a protocol error', () => {
    // A hostile or broken upstream: random bytes, or a valid body with bytes flipped. Never any
    // other exception (a RangeError, a TypeError), and never more data out than bytes in.
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 600 }),
          fc
            .tuple(
              fc.uint8Array({ maxLength: 400 }),
              fc.array(fc.nat(), { maxLength: 6 }),
              fc.integer({ min: 0, max: 255 }),
            )
            .map(([bytes, flips, value]) => {
              const wire = chunked(Buffer.from(bytes), [7, 64, 3]);
              for (const at of flips) wire[at % wire.length] = value;
              return new Uint8Array(wire);
            }),
        ),
        fc.array(fc.nat(), { maxLength: 10 }),
        (bytes, cuts) => {
          const wire = Buffer.from(bytes);
          try {
            const out = decode(wire, cuts);
            expect(out.data.length + out.rest.length).toBeLessThanOrEqual(wire.length);
          } catch (err) {
            expect(err).toBeInstanceOf(HttpProtocolError);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  test('a bad size, data longer than its size and an endless size line are refused', () => {
    expect(() => new ChunkedDecoder().push(Buffer.from('zz\r\n'))).toThrow(HttpProtocolError);
    expect(() => new ChunkedDecoder().push(Buffer.from('2\r\nabc\r\n'))).toThrow(HttpProtocolError);
    expect(() => new ChunkedDecoder().push(Buffer.from('1'.repeat(5000)))).toThrow(HttpProtocolError);
    // 16^13 would pass Number's exact range and any sane body: refused by its digits.
    expect(() => new ChunkedDecoder().push(Buffer.from('10000000000000\r\n'))).toThrow(HttpProtocolError);
    // Endless lines of any part: spaces, an extension, a trailer.
    for (const endless of [' '.repeat(5000), `5;${'x'.repeat(5000)}`, `0\r\nx-t: ${'y'.repeat(5000)}`])
      expect(() => new ChunkedDecoder().push(Buffer.from(endless))).toThrow(HttpProtocolError);
    // A line ended by a bare LF, or a CR followed by anything else.
    for (const broken of ['5\nhello\r\n', '5\rxhello\r\n', '5 5\r\n', '0\r\nx-t: 1\rz'])
      expect(() => new ChunkedDecoder().push(Buffer.from(broken))).toThrow(HttpProtocolError);
  });

  test('spaces around the size and extensions are read past; a read of several chunks is one buffer', () => {
    const wire = Buffer.from('5 ;name=value\r\nhello\r\n\t1;a;b="c"\r\n!\r\n0\r\nx-t: 1\r\n\r\n');
    const decoder = new ChunkedDecoder();
    const data = decoder.push(wire);
    expect(data?.toString()).toBe('hello!');
    expect(decoder.done).toBe(true);
    expect(decoder.rest).toBeUndefined();
    // One chunk alone is a view of the read, not a copy.
    const single = Buffer.from('5\r\nhello\r\n');
    const view = new ChunkedDecoder().push(single);
    expect(view?.buffer).toBe(single.buffer);
  });
});

describe('response heads and framing', () => {
  const head = (text: string) => parseResponseHead(text);

  test('status, reason and repeated fields', () => {
    const parsed = head('HTTP/1.1 429 Too Many Requests\r\nRetry-After: 2\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2');
    expect(parsed.status).toBe(429);
    expect(parsed.statusText).toBe('Too Many Requests');
    expect(parsed.headers.get('retry-after')).toBe('2');
    expect(parsed.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(head('HTTP/1.1 204').statusText).toBe('');
  });

  test('property: any head text parses or is refused as a protocol error, never another exception', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 300 }),
          fc
            .array(fc.string({ maxLength: 40 }), { maxLength: 8 })
            .map((lines) => ['HTTP/1.1 200 OK', ...lines].join('\r\n')),
        ),
        (text) => {
          try {
            const parsed = head(text);
            expect(parsed.status).toBeGreaterThanOrEqual(100);
          } catch (err) {
            expect(err).toBeInstanceOf(HttpProtocolError);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  test('what is not HTTP/1.x is refused, not guessed', () => {
    for (const bad of [
      'HTTP/2 200 OK',
      'ICY 200 OK',
      'HTTP/1.1 20 OK',
      'HTTP/1.1 200 OK\r\n folded: line',
      'HTTP/1.1 200 OK\r\nno colon',
      'HTTP/1.1 200 OK\r\nbad name: x',
    ])
      expect(() => head(bad)).toThrow(HttpProtocolError);
  });

  test('framing by RFC 9112 §6.3, and when the connection may carry another request', () => {
    const frame = (text: string, method = 'POST') => bodyFraming(head(text), method);
    expect(frame('HTTP/1.1 200 OK\r\nContent-Length: 5')).toEqual({
      framing: { kind: 'length', remaining: 5 },
      reusable: true,
    });
    expect(frame('HTTP/1.1 200 OK\r\nContent-Length: 0').framing.kind).toBe('none');
    expect(frame('HTTP/1.1 204 No Content\r\nContent-Length: 5').framing.kind).toBe('none');
    expect(frame('HTTP/1.1 200 OK\r\nContent-Length: 5', 'HEAD').framing.kind).toBe('none');
    expect(frame('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked').framing.kind).toBe('chunked');
    expect(frame('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5')).toMatchObject({
      framing: { kind: 'chunked' },
      reusable: false,
    });
    expect(frame('HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip')).toEqual({
      framing: { kind: 'close' },
      reusable: false,
    });
    expect(frame('HTTP/1.1 200 OK')).toEqual({ framing: { kind: 'close' }, reusable: false });
    expect(frame('HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1').reusable).toBe(false);
    expect(frame('HTTP/1.0 200 OK\r\nContent-Length: 1').reusable).toBe(false);
    expect(frame('HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1').reusable).toBe(true);
    expect(frame('HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5').framing).toEqual({
      kind: 'length',
      remaining: 5,
    });
    for (const bad of ['5, 6', '-1', '1e3', 'five', '9999999999999999'])
      expect(() => frame(`HTTP/1.1 200 OK\r\nContent-Length: ${bad}`)).toThrow(HttpProtocolError);
  });
});

describe('request bytes', () => {
  const url = new URL('https://api.example.test:8443/v1/chat/completions?x=1');

  /** What the socket writes: a string as its UTF-8, a buffer as it is. */
  const wire = (data: string | Buffer) => (typeof data === 'string' ? Buffer.from(data, 'utf8') : data);

  test('one piece: request line, host, the given fields, defaults, the UTF-8 length and body', () => {
    const body = '{"content":"héllo 👋"}';
    const text = wire(
      requestBytes({
        method: 'POST',
        url,
        headers: { authorization: 'Bearer k', Accept: 'text/event-stream' },
        body,
      }),
    ).toString('utf8');
    const [head, sent] = text.split('\r\n\r\n') as [string, string];
    const lines = head.split('\r\n');
    expect(lines[0]).toBe('POST /v1/chat/completions?x=1 HTTP/1.1');
    expect(lines).toContain('host: api.example.test:8443');
    expect(lines).toContain('authorization: Bearer k');
    expect(lines).toContain('Accept: text/event-stream');
    expect(lines.filter((l) => l.toLowerCase().startsWith('accept:'))).toHaveLength(1);
    expect(lines).toContain(`content-length: ${Buffer.byteLength(body)}`);
    expect(sent).toBe(body);
  });

  test('a latin1 field value goes as its one byte, the body beside it as UTF-8', () => {
    const body = '{"content":"héllo 👋"}';
    const sent = wire(requestBytes({ method: 'POST', url, headers: { 'x-note': 'café' }, body }));
    const blank = sent.indexOf('\r\n\r\n');
    const head = sent.subarray(0, blank).toString('latin1');
    expect(head.split('\r\n')).toContain('x-note: café');
    expect(sent.subarray(0, blank).includes(Buffer.from([0xe9]))).toBe(true);
    expect(head).toContain(`content-length: ${Buffer.byteLength(body)}`);
    expect(sent.subarray(blank + 4).toString('utf8')).toBe(body);
    expect(sent.byteLength).toBe(blank + 4 + Buffer.byteLength(body));
    // Without a body too: the head alone, ending in its blank line.
    const bare = wire(requestBytes({ method: 'GET', url, headers: { 'x-note': 'café' } }));
    expect(bare.subarray(-4).toString()).toBe('\r\n\r\n');
    expect(bare.includes(Buffer.from([0xe9]))).toBe(true);
  });

  test('a field that would split the request, or that the framing owns, is refused or dropped', () => {
    for (const value of ['a\r\nx-injected: 1', 'a\nb', 'a\0b', 'snow ☃'])
      expect(() => requestBytes({ method: 'POST', url, headers: { 'anthropic-beta': value }, body: '' })).toThrow(
        TypeError,
      );
    expect(() => requestBytes({ method: 'GET', url, headers: { 'bad name': 'x' } })).toThrow(TypeError);
    const text = wire(
      requestBytes({
        method: 'GET',
        url,
        headers: { host: 'evil.test', 'Content-Length': '99', connection: 'close' },
      }),
    ).toString();
    expect(text).not.toContain('evil.test');
    expect(text).not.toContain('99');
    expect(text.toLowerCase()).not.toContain('connection:');
    expect(text.endsWith('\r\n\r\n')).toBe(true);
  });
});

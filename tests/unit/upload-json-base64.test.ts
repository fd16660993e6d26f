import { describe, expect, test } from 'bun:test';
import { decodeBase64Stream } from '../../src/uploads/base64-decode-stream.ts';
import { MAX_JSON_OTHER_BYTES, openJsonUpload } from '../../src/uploads/json-upload-stream.ts';
import { rejection } from '../helpers/rejection.ts';

const enc = (s: string) => new TextEncoder().encode(s);

function chunked(body: Uint8Array, size: number): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= body.byteLength) return controller.close();
      controller.enqueue(body.slice(at, (at += size)));
    },
  });
}
const bytesOf = async (stream: ReadableStream<Uint8Array>) => new Uint8Array(await new Response(stream).arrayBuffer());

/** The decoded file of a JSON body, read in chunks of `size`. */
async function decodeJson(json: string, size = 7): Promise<Uint8Array> {
  const upload = await openJsonUpload(chunked(enc(json), size));
  if (upload.kind !== 'base64') throw new Error(`expected base64, got ${upload.kind}`);
  return bytesOf(decodeBase64Stream(upload.text));
}

describe('JSON upload body, scanned as it streams', () => {
  const data = crypto.getRandomValues(new Uint8Array(5000));
  const b64 = Buffer.from(data).toString('base64');

  test('raw base64, data URI, URL-safe alphabet, no padding, line breaks, escaped slashes — at any chunk size', async () => {
    const variants = [
      JSON.stringify({ base64: b64 }),
      JSON.stringify({ base64: `data:image/png;base64,${b64}` }),
      JSON.stringify({ base64: Buffer.from(data).toString('base64url') }),
      JSON.stringify({
        name: 'x.png',
        meta: { a: [1, 2.5e3, true, null, 'y'] },
        base64: b64.replace(/=+$/, ''),
        after: 1,
      }),
      JSON.stringify({ base64: b64.replace(/.{76}/g, '$&\r\n') }),
      `{ "base64" : "${b64.replaceAll('/', '\\/')}" }\n`,
    ];
    for (const json of variants) {
      for (const size of [1, 3, 7, 64, 100_000]) expect(await decodeJson(json, size)).toEqual(data);
    }
  });

  test('\\u escapes inside the base64 text are resolved', async () => {
    expect(await decodeJson('{"base64":"\\u0041\\u0042CD"}')).toEqual(new Uint8Array(Buffer.from('ABCD', 'base64')));
  });

  test('file_url is read whole, wherever it stands', async () => {
    expect(await openJsonUpload(chunked(enc('{"x":{"y":[1]},"file_url":"https://a.example/f.png"}'), 3))).toEqual({
      kind: 'file_url',
      url: 'https://a.example/f.png',
    });
  });

  test('invalid JSON, wrong shapes and both variants are 422s naming the problem', async () => {
    const cases: Array<[string, string]> = [
      ['', 'request body is not valid JSON (unexpected end at byte 0)'],
      ['[1]', 'request body is not valid JSON (unexpected "[" at byte 0)'],
      ['{}', 'base64 or file_url is required'],
      ['{"other":1}', 'base64 or file_url is required'],
      ['{"base64":1}', 'base64: expected a string'],
      ['{"file_url":null}', 'file_url: expected a string'],
      ['{"file_url":"https://a","base64":"QUJD"}', 'give either base64 or file_url, not both'],
      ['{"file_url":"https://a"} x', 'request body is not valid JSON (unexpected "x" at byte 25)'],
      ['{"a":tru}', 'request body is not valid JSON (unexpected "}" at byte 8)'],
    ];
    for (const [json, message] of cases) {
      expect(await rejection(openJsonUpload(chunked(enc(json), 2)))).toMatchObject({ status: 422, message });
    }
  });

  test('what follows the base64 string is checked before its stream ends', async () => {
    expect(await rejection(decodeJson('{"base64":"QUJD","file_url":"https://a"}'))).toMatchObject({
      status: 422,
      message: 'give either base64 or file_url, not both',
    });
    expect(await rejection(decodeJson('{"base64":"QUJD"'))).toMatchObject({
      status: 422,
      message: expect.stringContaining('not valid JSON'),
    });
    expect(await rejection(decodeJson('{"base64":"QUJD'))).toMatchObject({
      status: 422,
      message: expect.stringContaining('not valid JSON'),
    });
  });

  test('bytes outside the base64 string are bounded, before it and after it, however they are spread', async () => {
    const file = Buffer.from(crypto.getRandomValues(new Uint8Array(3 * MAX_JSON_OTHER_BYTES))).toString('base64');
    const padding = '0,'.repeat(MAX_JSON_OTHER_BYTES / 2);
    const tooLarge = { status: 413, message: expect.stringContaining('other than base64 are limited') };
    for (const json of [
      `{"pad":[${padding}0],"base64":"QUJD"}`,
      `{"base64":"QUJD","pad":[${padding}0]}`,
      `{"base64":"QUJD"${' '.repeat(MAX_JSON_OTHER_BYTES)}}`,
      `{"a":"${'x'.repeat(8000)}","b":"${'x'.repeat(8000)}","c":[${padding}],"base64":"QUJD"}`,
    ]) {
      expect(await rejection(decodeJson(json, 4096))).toMatchObject(tooLarge);
    }
    // The file's own bytes, escapes included, never count: a base64 three times the bound passes.
    const escaped = `{"name":"x.png","base64":"${file.replaceAll('/', '\\/')}"}`;
    expect((await decodeJson(escaped, 4096)).byteLength).toBe(3 * MAX_JSON_OTHER_BYTES);
  });
});

describe('base64 decoding stream', () => {
  const decode = (text: string, size = 5) => bytesOf(decodeBase64Stream(chunked(enc(text), size)));

  test('padding and lengths', async () => {
    for (const text of ['QQ==', 'QQ', 'QUI=', 'QUI', 'QUJD', ' QUJD\n']) {
      expect(Buffer.from(await decode(text, 1)).toString()).toBe(Buffer.from(text.trim(), 'base64').toString());
    }
  });

  test('text is bounded at twice the base64 of the largest file: whitespace alone decodes to nothing', async () => {
    const spaces = new Uint8Array(64 * 1024).fill(0x20);
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(spaces);
      },
    });
    expect(await rejection(bytesOf(decodeBase64Stream(endless, 300_000)))).toMatchObject({
      status: 413,
      message: expect.stringContaining('base64: longer than 801024 characters'),
    });
    expect(pulled).toBeLessThan(20);
    // Line-broken base64 of a file at the bound still fits.
    const file = crypto.getRandomValues(new Uint8Array(300_000));
    const wrapped = Buffer.from(file).toString('base64').replace(/.{76}/g, '$&\r\n');
    expect(await bytesOf(decodeBase64Stream(chunked(enc(wrapped), 65_536), 300_000))).toEqual(file);
  });

  test('leading whitespace is dropped as it comes, not kept and trimmed again with each chunk', async () => {
    // 32 MiB of spaces in 16 KiB chunks: kept whole, each chunk trimmed the whole again (quadratic).
    const chunk = new Uint8Array(16 * 1024).fill(0x20);
    let left = 2048;
    const spaces = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (left-- === 0) return controller.close();
        controller.enqueue(chunk);
      },
    });
    const started = performance.now();
    expect(await rejection(bytesOf(decodeBase64Stream(spaces)))).toMatchObject({
      status: 422,
      message: 'base64: is empty',
    });
    // Linear, this is tens of milliseconds; quadratic, tens of seconds.
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  test('invalid base64 is a 422 naming base64', async () => {
    const cases: Array<[string, string]> = [
      ['', 'base64: is empty'],
      ['QUJD!', 'base64: invalid character "!"'],
      ['QQ==QQ', 'base64: characters after the "=" padding'],
      ['Q', 'base64: truncated (one character too many or too few)'],
      ['QUJDQ===', 'base64: wrong "=" padding'],
      ['QUJD=', 'base64: wrong "=" padding'],
      ['data:image/png,QUJD', 'base64: a data URI must be base64-encoded ("data:<type>;base64,…")'],
      ['data:image/png;base64', 'base64: a data URI needs a "," before its data'],
      ['data:;base64,', 'base64: is empty'],
    ];
    for (const [text, message] of cases) {
      for (const size of [1, 100]) expect(await rejection(decode(text, size))).toMatchObject({ status: 422, message });
    }
  });
});

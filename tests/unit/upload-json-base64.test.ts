import { describe, expect, test } from 'bun:test';
import { decodeBase64Stream } from '../../src/uploads/base64-decode-stream.ts';
import { openJsonUpload } from '../../src/uploads/json-upload-stream.ts';
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
});

describe('base64 decoding stream', () => {
  const decode = (text: string, size = 5) => bytesOf(decodeBase64Stream(chunked(enc(text), size)));

  test('padding and lengths', async () => {
    for (const text of ['QQ==', 'QQ', 'QUI=', 'QUI', 'QUJD', ' QUJD\n']) {
      expect(Buffer.from(await decode(text, 1)).toString()).toBe(Buffer.from(text.trim(), 'base64').toString());
    }
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

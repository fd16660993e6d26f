import { describe, expect, test } from 'bun:test';
import { etagMatches, parseRange } from '../../src/storage/byte-range.ts';
import { extensionFor } from '../../providers/common/file-extension.ts';
import { fileIdFromName, newFileId } from '../../src/storage/file-id.ts';
import { peekStream } from '../../src/storage/peek-stream.ts';
import { sniffContentType } from '../../providers/common/sniff-content-type.ts';

const bytes = (...parts: Array<string | number[]>) => {
  const out: number[] = [];
  for (const part of parts) out.push(...(typeof part === 'string' ? [...part].map((c) => c.charCodeAt(0)) : part));
  return new Uint8Array(out);
};
const box = (brand: string) => bytes([0, 0, 0, 0x18], 'ftyp', brand, [0, 0, 0, 0], 'isomavc1');

describe('sniffContentType', () => {
  const cases: Array<[string, Uint8Array, string]> = [
    ['png', bytes([0x89], 'PNG', [0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13], 'IHDR'), 'image/png'],
    ['jpeg', bytes([0xff, 0xd8, 0xff, 0xe0, 0, 0x10], 'JFIF'), 'image/jpeg'],
    ['gif87', bytes('GIF87a', [1, 0]), 'image/gif'],
    ['gif89', bytes('GIF89a', [1, 0]), 'image/gif'],
    ['webp', bytes('RIFF', [0x24, 0, 0, 0], 'WEBPVP8 '), 'image/webp'],
    ['wav', bytes('RIFF', [0x24, 0, 0, 0], 'WAVEfmt '), 'audio/wav'],
    ['mp4 isom', box('isom'), 'video/mp4'],
    ['mp4 mp42', box('mp42'), 'video/mp4'],
    ['mov', box('qt  '), 'video/quicktime'],
    ['m4a', box('M4A '), 'audio/mp4'],
    ['avif', box('avif'), 'image/avif'],
    ['webm', bytes([0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x86, 0x81, 1, 0x42, 0x82, 0x84], 'webm'), 'video/webm'],
    [
      'mkv',
      bytes([0x1a, 0x45, 0xdf, 0xa3, 0xa3, 0x42, 0x86, 0x81, 1, 0x42, 0x82, 0x88], 'matroska'),
      'video/x-matroska',
    ],
    ['mp3 id3', bytes('ID3', [4, 0, 0, 0, 0, 0, 0]), 'audio/mpeg'],
    ['mp3 frame sync', bytes([0xff, 0xfb, 0x90, 0x64]), 'audio/mpeg'],
    ['mp3 mpeg2', bytes([0xff, 0xf3, 0x90, 0x64]), 'audio/mpeg'],
    ['aac adts', bytes([0xff, 0xf1, 0x50, 0x80]), 'audio/aac'],
    [
      'ogg vorbis',
      bytes('OggS', [0, 2, 0, 0, 0, 0, 0, 0, 0, 0], [1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0x1e, 1], 'vorbis'),
      'audio/ogg',
    ],
    [
      'ogg opus',
      bytes('OggS', [0, 2, 0, 0, 0, 0, 0, 0, 0, 0], [1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0x13], 'OpusHead'),
      'audio/ogg',
    ],
    ['flac', bytes('fLaC', [0, 0, 0, 0x22]), 'audio/flac'],
    ['pdf', bytes('%PDF-1.7\n'), 'application/pdf'],
    ['json object', bytes('  {"a": 1}'), 'application/json'],
    ['json array with BOM', bytes([0xef, 0xbb, 0xbf], '[1,2]'), 'application/json'],
    ['svg', bytes('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"/>'), 'image/svg+xml'],
    ['html is only text', bytes('<!doctype html><script>alert(1)</script>'), 'text/plain; charset=utf-8'],
    ['utf-8 text', new TextEncoder().encode('héllo wörld ✓'), 'text/plain; charset=utf-8'],
    ['binary', bytes([0, 1, 2, 3, 4, 5, 0xfe]), 'application/octet-stream'],
    ['empty', new Uint8Array(0), 'application/octet-stream'],
    ['invalid utf-8', bytes([0xc3, 0x28, 0x41]), 'application/octet-stream'],
  ];
  for (const [name, sample, type] of cases)
    test(`${name} → ${type}`, () => expect(sniffContentType(sample)).toBe(type));

  test('a multi-byte character cut off at the end of the sample is still text', () => {
    const text = new TextEncoder().encode('ok ✓');
    expect(sniffContentType(text.subarray(0, text.length - 1))).toBe('text/plain; charset=utf-8');
  });
});

describe('file names and ranges', () => {
  test('extensions follow the content type', () => {
    expect(extensionFor('image/png')).toBe('png');
    expect(extensionFor('audio/mpeg')).toBe('mp3');
    expect(extensionFor('Video/MP4; codecs="avc1"')).toBe('mp4');
    expect(extensionFor('text/plain; charset=utf-8')).toBe('txt');
    expect(extensionFor('application/x-unknown')).toBeUndefined();
  });

  test('file ids are 144-bit URL-safe tokens; names with extensions map back to them', () => {
    const ids = new Set(Array.from({ length: 1000 }, newFileId));
    expect(ids.size).toBe(1000);
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]{24}$/);
    const id = newFileId();
    expect(fileIdFromName(id)).toBe(id);
    expect(fileIdFromName(`${id}.png`)).toBe(id);
    expect(fileIdFromName(`${id}.tar.gz`)).toBe(id);
    expect(fileIdFromName('short')).toBeUndefined();
    expect(fileIdFromName('../../../../etc/passwd.png')).toBeUndefined();
  });

  test('Range parsing: a-b, a-, -n, clamping, unsatisfiable, ignored forms', () => {
    expect(parseRange('bytes=0-9', 100)).toEqual({ start: 0, end: 9 });
    expect(parseRange('bytes=90-', 100)).toEqual({ start: 90, end: 99 });
    expect(parseRange('bytes=-10', 100)).toEqual({ start: 90, end: 99 });
    expect(parseRange('bytes=-500', 100)).toEqual({ start: 0, end: 99 });
    expect(parseRange('bytes=50-500', 100)).toEqual({ start: 50, end: 99 });
    expect(parseRange('bytes=100-', 100)).toBe('unsatisfiable');
    expect(parseRange('bytes=100-200', 100)).toBe('unsatisfiable');
    expect(parseRange('bytes=-0', 100)).toBe('unsatisfiable');
    expect(parseRange('bytes=0-', 0)).toBe('unsatisfiable');
    expect(parseRange('bytes=9-3', 100)).toBeUndefined();
    expect(parseRange('bytes=0-1,5-6', 100)).toBeUndefined();
    expect(parseRange('items=0-1', 100)).toBeUndefined();
    expect(parseRange('bytes=-', 100)).toBeUndefined();
    expect(parseRange(null, 100)).toBeUndefined();
  });

  test('If-None-Match: lists, weak prefixes and *', () => {
    expect(etagMatches('"abc"', '"abc"')).toBe(true);
    expect(etagMatches('"x", W/"abc"', '"abc"')).toBe(true);
    expect(etagMatches('*', '"abc"')).toBe(true);
    expect(etagMatches('"abd"', '"abc"')).toBe(false);
    expect(etagMatches(null, '"abc"')).toBe(false);
  });

  test('peekStream returns the head and replays every byte', async () => {
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new Uint8Array([1, 2, 3]));
        c.enqueue(new Uint8Array([4, 5, 6]));
        c.enqueue(new Uint8Array([7]));
        c.close();
      },
    });
    const { head, stream: rest } = await peekStream(stream, 4);
    expect([...head]).toEqual([1, 2, 3, 4]);
    expect([...new Uint8Array(await new Response(rest).arrayBuffer())]).toEqual([1, 2, 3, 4, 5, 6, 7]);
    const short = await peekStream(new Response('ab').body as ReadableStream<Uint8Array>, 512);
    expect(new TextDecoder().decode(short.head)).toBe('ab');
    expect(await new Response(short.stream).text()).toBe('ab');
  });
});

import { describe, expect, test } from 'bun:test';
import { inflateSync } from 'node:zlib';
import { crc32 } from '../../providers/sandbox/media/crc32.ts';
import { encodePng, encodeWav, sandboxImage, sandboxSpeech } from '../../providers/sandbox/media/index.ts';

const ascii = (bytes: Uint8Array, start: number, end: number): string =>
  new TextDecoder().decode(bytes.subarray(start, end));

interface PngChunk {
  type: string;
  data: Uint8Array;
  crc: number;
  typeAndData: Uint8Array;
}

function pngChunks(png: Uint8Array): PngChunk[] {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  const chunks: PngChunk[] = [];
  for (let offset = 8; offset < png.length; ) {
    const length = view.getUint32(offset);
    chunks.push({
      type: ascii(png, offset + 4, offset + 8),
      data: png.subarray(offset + 8, offset + 8 + length),
      crc: view.getUint32(offset + 8 + length),
      typeAndData: png.subarray(offset + 4, offset + 8 + length),
    });
    offset += 12 + length;
  }
  return chunks;
}

function decodeScanlines(png: Uint8Array): Uint8Array {
  const idat = pngChunks(png).filter((c) => c.type === 'IDAT');
  return new Uint8Array(inflateSync(Buffer.concat(idat.map((c) => c.data))));
}

describe('sandbox PNG', () => {
  test('crc32 matches the standard check value', () => {
    expect(crc32(new TextEncoder().encode('123456789'))).toBe(0xcbf43926);
  });

  test('signature, IHDR, valid CRCs and an IDAT that inflates to filter-0 scanlines', () => {
    const png = sandboxImage('a lighthouse at dusk', 37, 21, 0);
    expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const chunks = pngChunks(png);
    expect(chunks.map((c) => c.type)).toEqual(['IHDR', 'IDAT', 'IEND']);
    const ihdr = new DataView(chunks[0]!.data.buffer, chunks[0]!.data.byteOffset, 13);
    expect([ihdr.getUint32(0), ihdr.getUint32(4)]).toEqual([37, 21]);
    expect([...chunks[0]!.data.subarray(8)]).toEqual([8, 2, 0, 0, 0]);
    // Bun's crc32 is an independent oracle for our table-driven implementation.
    for (const chunk of chunks) expect(chunk.crc).toBe(Bun.hash.crc32(chunk.typeAndData));
    const raw = decodeScanlines(png);
    expect(raw.length).toBe(21 * (1 + 3 * 37));
    for (let y = 0; y < 21; y++) expect(raw[y * (1 + 3 * 37)]).toBe(0);
  });

  test('encodePng stores exactly the pixels it was given', () => {
    const png = encodePng(3, 2, (x, y) => [x * 80, y * 200, 7]);
    const raw = decodeScanlines(png);
    expect([...raw]).toEqual([0, 0, 0, 7, 80, 0, 7, 160, 0, 7, 0, 0, 200, 7, 80, 200, 7, 160, 200, 7]);
    expect(() => encodePng(2, 2, new Uint8Array(11))).toThrow(RangeError);
  });

  test('deterministic per prompt and index, different otherwise', () => {
    const a = sandboxImage('red fox', 64, 48, 0);
    expect(sandboxImage('red fox', 64, 48, 0)).toEqual(a);
    expect(sandboxImage('blue whale', 64, 48, 0)).not.toEqual(a);
    expect(sandboxImage('red fox', 64, 48, 1)).not.toEqual(a);
    const pixels = decodeScanlines(a);
    expect(new Set(pixels).size).toBeGreaterThan(20); // a picture, not a flat fill
  });

  test('2048×2048 encodes quickly', () => {
    const started = performance.now();
    const png = sandboxImage('benchmark', 2048, 2048, 0);
    expect(performance.now() - started).toBeLessThan(1500); // ~120 ms locally; generous for CI
    expect(decodeScanlines(png).length).toBe(2048 * (1 + 3 * 2048));
  });

  test('rejects unusable sizes', () => {
    expect(() => sandboxImage('x', 0, 10, 0)).toThrow(RangeError);
    expect(() => sandboxImage('x', 10.5, 10, 0)).toThrow(RangeError);
  });
});

describe('sandbox WAV', () => {
  const header = (wav: Uint8Array) => new DataView(wav.buffer, wav.byteOffset, 44);

  test('RIFF/WAVE/fmt/data headers for 16-bit PCM mono', () => {
    const wav = encodeWav(Int16Array.of(1, -2, 32767), 8000);
    const view = header(wav);
    expect([ascii(wav, 0, 4), ascii(wav, 8, 12), ascii(wav, 12, 16), ascii(wav, 36, 40)]).toEqual([
      'RIFF',
      'WAVE',
      'fmt ',
      'data',
    ]);
    expect(view.getUint32(4, true)).toBe(wav.length - 8);
    expect([view.getUint16(20, true), view.getUint16(22, true), view.getUint32(24, true)]).toEqual([1, 1, 8000]);
    expect([view.getUint32(28, true), view.getUint16(32, true), view.getUint16(34, true)]).toEqual([16000, 2, 16]);
    expect(view.getUint32(40, true)).toBe(6);
    expect([...wav.subarray(44)]).toEqual([1, 0, 0xfe, 0xff, 0xff, 0x7f]);
  });

  test('speech length follows the text: 60 ms per character, 0.5 s minimum, 5 min cap', () => {
    const cases: Array<[string, number]> = [
      ['x'.repeat(50), 3],
      ['hi', 0.5],
      ['🙂'.repeat(20), 1.2], // counted in code points, not UTF-16 units
      ['y'.repeat(20_000), 300],
    ];
    for (const [text, seconds] of cases) {
      const wav = sandboxSpeech(text);
      const view = header(wav);
      expect(view.getUint32(24, true)).toBe(16_000);
      expect(view.getUint32(40, true)).toBe(Math.round(seconds * 16_000) * 2);
      expect(wav.length).toBe(44 + Math.round(seconds * 16_000) * 2);
    }
  });

  test('audible, unclipped, deterministic, and silent where the text has spaces', () => {
    const wav = sandboxSpeech('hello world');
    const samples = new Int16Array(wav.slice(44).buffer);
    const peak = samples.reduce((m, s) => Math.max(m, Math.abs(s)), 0);
    expect(peak).toBeGreaterThan(3000);
    expect(peak).toBeLessThan(32767);
    const space = samples.subarray(5 * 960, 6 * 960); // the 6th character slot is the space
    expect(space.every((s) => s === 0)).toBe(true);
    expect(sandboxSpeech('hello world')).toEqual(wav);
    expect(sandboxSpeech('hello wordl')).not.toEqual(wav);
  });
});

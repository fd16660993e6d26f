import { deflateSync } from 'node:zlib';
import { crc32 } from './crc32.ts';
import { concat } from './bytes.ts';

/**
 * Minimal PNG encoder: 8-bit truecolour (colour type 2), no interlace, filter type 0 on every row.
 * Filter 0 keeps encoding a single linear pass; sandbox images are smooth gradients that deflate well
 * without prediction filters.
 * @see https://www.w3.org/TR/png-3/
 */
export type PixelFn = (x: number, y: number) => readonly [number, number, number];

const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const ASCII = new TextEncoder();

function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  const typeBytes = ASCII.encode(type);
  view.setUint32(0, data.length);
  out.set(typeBytes, 4);
  out.set(data, 8);
  // The CRC covers the chunk type and data, not the length (PNG §5.3).
  view.setUint32(8 + data.length, crc32(typeBytes, data));
  return out;
}

function header(width: number, height: number): Uint8Array {
  const ihdr = new Uint8Array(13);
  const view = new DataView(ihdr.buffer);
  view.setUint32(0, width);
  view.setUint32(4, height);
  ihdr.set([8, 2, 0, 0, 0], 8); // bit depth 8, truecolour, deflate, adaptive filtering method 0, no interlace
  return ihdr;
}

/**
 * Encodes `pixels` (row-major RGB, 3 bytes per pixel) or a per-pixel callback as a PNG file.
 * The callback form is convenient for tests; large images should pass a buffer.
 */
export function encodePng(width: number, height: number, pixels: Uint8Array | PixelFn): Uint8Array {
  if (
    !Number.isInteger(width) ||
    !Number.isInteger(height) ||
    width < 1 ||
    height < 1 ||
    width > 0x7fffffff ||
    height > 0x7fffffff
  ) {
    throw new RangeError(`PNG dimensions must be positive integers, got ${width}x${height}`);
  }
  const rowBytes = 3 * width;
  if (pixels instanceof Uint8Array && pixels.length !== rowBytes * height) {
    throw new RangeError(`expected ${rowBytes * height} RGB bytes, got ${pixels.length}`);
  }
  // Each scanline is one filter-type byte (0 = None) followed by the row's samples.
  const raw = new Uint8Array(height * (1 + rowBytes));
  for (let y = 0; y < height; y++) {
    const start = y * (1 + rowBytes) + 1;
    if (pixels instanceof Uint8Array) {
      raw.set(pixels.subarray(y * rowBytes, (y + 1) * rowBytes), start);
      continue;
    }
    for (let x = 0; x < width; x++) {
      const [r, g, b] = pixels(x, y);
      raw[start + 3 * x] = r;
      raw[start + 3 * x + 1] = g;
      raw[start + 3 * x + 2] = b;
    }
  }
  // node:zlib's deflateSync emits the zlib wrapper (RFC 1950: CMF/FLG header + Adler-32) that PNG's
  // IDAT requires; Bun.deflateSync emits raw RFC 1951 deflate and would produce a corrupt file.
  // Level 6 is zlib's default; on 2048x2048 gradients it costs tens of milliseconds.
  const idat = deflateSync(raw, { level: 6 });
  const parts = [
    Uint8Array.from(SIGNATURE),
    chunk('IHDR', header(width, height)),
    chunk('IDAT', idat),
    chunk('IEND', new Uint8Array(0)),
  ];
  return concat(parts);
}

/**
 * ISO base media file format (ISO/IEC 14496-12) box primitives: every box is a 32-bit big-endian
 * size, a four-character type, then its payload; "full boxes" add a version byte and 24-bit flags.
 * @see https://developer.apple.com/documentation/quicktime-file-format (same layout, freely readable)
 */
import { type Bytes, concat } from './bytes.ts';

export { type Bytes, concat };

export const u8 = (value: number): Bytes => Uint8Array.of(value & 0xff);
export const u16 = (value: number): Bytes => Uint8Array.of((value >>> 8) & 0xff, value & 0xff);
export function u32(value: number): Bytes {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, value >>> 0);
  return out;
}
export const zeros = (count: number): Bytes => new Uint8Array(count);
export const fourcc = (code: string): Bytes => new TextEncoder().encode(code.slice(0, 4).padEnd(4, ' '));

/** Big-endian 32-bit array, e.g. stsz entries, without one small allocation per value. */
export function u32s(values: readonly number[]): Bytes {
  const out = new Uint8Array(values.length * 4);
  const view = new DataView(out.buffer);
  for (const [i, value] of values.entries()) view.setUint32(i * 4, value >>> 0);
  return out;
}

export function box(type: string, ...payload: Bytes[]): Bytes {
  const body = concat(payload);
  return concat([u32(8 + body.length), fourcc(type), body]);
}

export function fullBox(type: string, version: number, flags: number, ...payload: Bytes[]): Bytes {
  return box(type, u8(version), u8(flags >>> 16), u16(flags & 0xffff), ...payload);
}

/** The identity transformation matrix used by mvhd and tkhd (16.16 and 2.30 fixed point). */
export const UNITY_MATRIX: Bytes = u32s([0x00010000, 0, 0, 0, 0x00010000, 0, 0, 0, 0x40000000]);

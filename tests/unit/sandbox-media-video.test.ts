import { describe, expect, test } from 'bun:test';
import { BitWriter } from '../../providers/sandbox/media/bit-writer.ts';
import { addEmulationPrevention } from '../../providers/sandbox/media/h264-nal.ts';
import { sandboxVideo, videoFrameSize } from '../../providers/sandbox/media/index.ts';

interface Box {
  type: string;
  start: number;
  end: number;
  body: number;
  children: Box[];
}

/** Payload offset of child boxes inside containers (sample entries skip their fixed fields). */
const CHILDREN_AT: Record<string, number> = { moov: 0, trak: 0, mdia: 0, minf: 0, dinf: 0, stbl: 0, stsd: 8, avc1: 78 };

function walk(bytes: Uint8Array, start = 0, end = bytes.length): Box[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const boxes: Box[] = [];
  for (let offset = start; offset < end; ) {
    const size = view.getUint32(offset);
    const type = new TextDecoder().decode(bytes.subarray(offset + 4, offset + 8));
    if (size < 8 || offset + size > end) throw new Error(`bad box ${type} at ${offset}`);
    const at = CHILDREN_AT[type];
    boxes.push({
      type,
      start: offset,
      end: offset + size,
      body: offset + 8,
      children: at === undefined ? [] : walk(bytes, offset + 8 + at, offset + size),
    });
    offset += size;
  }
  return boxes;
}

function find(boxes: Box[], path: string): Box {
  const [head, ...rest] = path.split('/');
  const found = boxes.find((b) => b.type === head);
  if (!found) throw new Error(`missing ${head}`);
  return rest.length ? find(found.children, rest.join('/')) : found;
}

/** Exp-Golomb reader over an RBSP, for checking the SPS we wrote. */
function bitReader(bytes: Uint8Array) {
  let pos = 0;
  const bit = (): number => (bytes[pos >> 3]! >> (7 - (pos++ & 7))) & 1;
  const u = (n: number): number => {
    let v = 0;
    for (let i = 0; i < n; i++) v = v * 2 + bit();
    return v;
  };
  const ue = (): number => {
    let zeros = 0;
    while (bit() === 0) zeros++;
    return 2 ** zeros - 1 + u(zeros);
  };
  return { u, ue };
}

function parse(video: Uint8Array) {
  const view = new DataView(video.buffer, video.byteOffset, video.byteLength);
  const boxes = walk(video);
  const stbl = 'moov/trak/mdia/minf/stbl';
  const u32 = (box: Box, at: number) => view.getUint32(box.body + at);
  return { view, boxes, u32, stbl, avcC: find(boxes, `${stbl}/stsd/avc1/avcC`) };
}

describe('sandbox MP4', () => {
  test('bit writer and emulation prevention follow H.264 §9.1 / §7.4.1', () => {
    const w = new BitWriter().ue(0).ue(1).ue(25).se(-1).alignZero(); // 1 010 000011010 011 + pad
    expect([...w.finish()]).toEqual([0b10100000, 0b11010011]);
    expect([...addEmulationPrevention(Uint8Array.of(0, 0, 1, 0, 0, 0, 0, 0, 4))]).toEqual([
      0, 0, 3, 1, 0, 0, 3, 0, 0, 3, 0, 4,
    ]);
  });

  test('box tree, AVC config, sizes and durations', () => {
    const seconds = 5;
    const video = sandboxVideo('a paper boat on a pond', { seconds, width: 1280, height: 720, fps: 6 });
    const { view, boxes, u32, stbl, avcC } = parse(video);
    expect(boxes.map((b) => b.type)).toEqual(['ftyp', 'moov', 'mdat']);
    expect(new TextDecoder().decode(video.subarray(8, 12))).toBe('isom');

    const mvhd = find(boxes, 'moov/mvhd');
    expect(u32(mvhd, 16) / u32(mvhd, 12)).toBe(seconds);
    const mdhd = find(boxes, 'moov/trak/mdia/mdhd');
    expect(u32(mdhd, 16) / u32(mdhd, 12)).toBe(seconds);
    const tkhd = find(boxes, 'moov/trak/tkhd');
    expect(u32(tkhd, 20) / u32(mvhd, 12)).toBe(seconds);
    expect([u32(tkhd, 76) / 65536, u32(tkhd, 80) / 65536]).toEqual([256, 144]);
    expect(
      new TextDecoder().decode(
        video.subarray(find(boxes, 'moov/trak/mdia/hdlr').body + 8, find(boxes, 'moov/trak/mdia/hdlr').body + 12),
      ),
    ).toBe('vide');

    const avc1 = find(boxes, `${stbl}/stsd/avc1`);
    expect([view.getUint16(avc1.body + 24), view.getUint16(avc1.body + 26)]).toEqual([256, 144]);
    const config = video.subarray(avcC.body, avcC.end);
    expect([config[0], config[1], config[4]! & 3, config[5]! & 31]).toEqual([1, 66, 3, 1]);
    const sps = config.subarray(8, 8 + view.getUint16(avcC.body + 6));
    expect([sps[0]! & 31, sps[1]]).toEqual([7, 66]);
    // Decode the SPS up to the frame size and cropping to check the coded dimensions.
    const r = bitReader(sps.subarray(4));
    r.ue();
    r.ue();
    expect(r.ue()).toBe(2);
    r.ue();
    r.u(1);
    const [wMbs, hMbs] = [r.ue() + 1, r.ue() + 1];
    expect(r.u(1)).toBe(1);
    r.u(1);
    const crop = r.u(1) ? [r.ue(), r.ue(), r.ue(), r.ue()] : [0, 0, 0, 0];
    expect([wMbs * 16 - 2 * (crop[0]! + crop[1]!), hMbs * 16 - 2 * (crop[2]! + crop[3]!)]).toEqual([256, 144]);

    const stsz = find(boxes, `${stbl}/stsz`);
    const count = u32(stsz, 8);
    expect(count).toBe(6 * seconds);
    expect(u32(find(boxes, `${stbl}/stss`), 4)).toBe(count);
    const mdat = find(boxes, 'mdat');
    expect(u32(find(boxes, `${stbl}/stco`), 8)).toBe(mdat.body);

    let offset = mdat.body;
    for (let i = 0; i < count; i++) {
      const size = u32(stsz, 12 + 4 * i);
      const nalTypes: number[] = [];
      let used = 0;
      while (used < size) {
        const length = view.getUint32(offset + used);
        nalTypes.push(video[offset + used + 4]! & 31);
        used += 4 + length;
      }
      expect(used).toBe(size);
      expect(nalTypes[0]).toBe(5);
      offset += size;
    }
    expect(offset).toBe(mdat.end);
  });

  test('frames change over time, output is deterministic, odd durations stay exact', () => {
    const make = (prompt: string) => sandboxVideo(prompt, { seconds: 1.1, width: 100, height: 50 });
    const video = make('kite');
    expect(make('kite')).toEqual(video);
    expect(make('comet')).not.toEqual(video);
    const { boxes, u32, stbl } = parse(video);
    const mdhd = find(boxes, 'moov/trak/mdia/mdhd');
    expect(u32(mdhd, 16) / u32(mdhd, 12)).toBeCloseTo(1.1, 9);
    expect(u32(find(boxes, `${stbl}/stsz`), 8)).toBe(7);
    const mdat = find(boxes, 'mdat');
    const frameSize = u32(find(boxes, `${stbl}/stsz`), 12);
    const first = video.subarray(mdat.body + 16, mdat.body + frameSize);
    const second = video.subarray(mdat.body + frameSize + 16, mdat.body + 2 * frameSize);
    expect(Buffer.compare(first, second)).not.toBe(0);
  });

  test('frame size keeps the aspect ratio within the sandbox cap', () => {
    expect(videoFrameSize(1280, 720)).toEqual({ width: 256, height: 144 });
    expect(videoFrameSize(720, 1280)).toEqual({ width: 144, height: 256 });
    expect(videoFrameSize(101, 51)).toEqual({ width: 102, height: 52 });
    expect(() => sandboxVideo('x', { seconds: 0, width: 64, height: 64 })).toThrow(RangeError);
  });
});

import { box, concat, fourcc, fullBox, u16, u32, u32s, u8, UNITY_MATRIX, zeros, type Bytes } from './mp4-boxes.ts';

/**
 * The `moov` box for a single-track AVC video whose samples all sit in one chunk (ISO/IEC 14496-12
 * §8.2–8.7; avc1/avcC from ISO/IEC 14496-15 §5.3). One chunk means one stco offset, so moov can
 * precede mdat ("fast start") with the offset computed up front.
 */
export interface AvcTrack {
  width: number;
  height: number;
  sps: Bytes;
  pps: Bytes;
  /** Media timescale (ticks per second) for mdhd/stts. */
  timescale: number;
  /** Per-sample durations in `timescale` ticks. */
  sampleDurations: number[];
  sampleSizes: number[];
  /** Absolute file offset of the first sample (the single chunk). */
  chunkOffset: number;
}

/** Movie timescale: milliseconds are plenty for mvhd/tkhd durations. */
export const MOVIE_TIMESCALE = 1000;

/** AVCDecoderConfigurationRecord: profile/compat/level copied from the SPS, 4-byte NAL lengths. */
function avcC(sps: Bytes, pps: Bytes): Bytes {
  return box(
    'avcC',
    u8(1),
    u8(sps[1]!),
    u8(sps[2]!),
    u8(sps[3]!),
    u8(0xfc | 3),
    u8(0xe0 | 1),
    u16(sps.length),
    sps,
    u8(1),
    u16(pps.length),
    pps,
  );
}

function avc1(track: AvcTrack): Bytes {
  const compressor = new Uint8Array(32); // Pascal string: length byte then name
  const name = new TextEncoder().encode('sandbox I_PCM');
  compressor[0] = name.length;
  compressor.set(name, 1);
  return box(
    'avc1',
    zeros(6),
    u16(1), // reserved, data_reference_index
    zeros(16), // pre_defined, reserved, pre_defined[3]
    u16(track.width),
    u16(track.height),
    u32(0x00480000),
    u32(0x00480000), // 72 dpi
    u32(0),
    u16(1), // reserved, frame_count
    compressor,
    u16(0x0018),
    u16(0xffff), // depth 24, pre_defined -1
    avcC(track.sps, track.pps),
  );
}

/** Run-length encodes sample durations into stts entries. */
function stts(durations: number[]): Bytes {
  const runs: number[] = [];
  for (const duration of durations) {
    if (runs.length > 0 && runs[runs.length - 1] === duration) runs[runs.length - 2]!++;
    else runs.push(1, duration);
  }
  return fullBox('stts', 0, 0, u32(runs.length / 2), u32s(runs));
}

function stbl(track: AvcTrack): Bytes {
  const count = track.sampleSizes.length;
  return box(
    'stbl',
    fullBox('stsd', 0, 0, u32(1), avc1(track)),
    stts(track.sampleDurations),
    fullBox('stsc', 0, 0, u32(1), u32s([1, count, 1])), // chunk 1 onwards: all samples, description 1
    fullBox('stsz', 0, 0, u32(0), u32(count), u32s(track.sampleSizes)),
    fullBox('stco', 0, 0, u32(1), u32(track.chunkOffset)),
    // Every sample is an IDR picture; listing them all lets players seek to any frame.
    fullBox('stss', 0, 0, u32(count), u32s(Array.from({ length: count }, (_, i) => i + 1))),
  );
}

export function moov(track: AvcTrack): Bytes {
  const mediaDuration = track.sampleDurations.reduce((a, b) => a + b, 0);
  const movieDuration = Math.round((mediaDuration * MOVIE_TIMESCALE) / track.timescale);
  const mvhd = fullBox(
    'mvhd',
    0,
    0,
    u32(0),
    u32(0),
    u32(MOVIE_TIMESCALE),
    u32(movieDuration),
    u32(0x00010000),
    u16(0x0100),
    zeros(10),
    UNITY_MATRIX,
    zeros(24),
    u32(2),
  );
  // tkhd flags 3 = enabled | in movie; width/height are 16.16 fixed point.
  const tkhd = fullBox(
    'tkhd',
    0,
    3,
    u32(0),
    u32(0),
    u32(1),
    u32(0),
    u32(movieDuration),
    zeros(8),
    u16(0),
    u16(0),
    u16(0),
    u16(0),
    UNITY_MATRIX,
    u32(track.width * 65536),
    u32(track.height * 65536),
  );
  const mdhd = fullBox('mdhd', 0, 0, u32(0), u32(0), u32(track.timescale), u32(mediaDuration), u16(0x55c4), u16(0)); // language 'und'
  const hdlr = fullBox('hdlr', 0, 0, u32(0), fourcc('vide'), zeros(12), new TextEncoder().encode('VideoHandler\0'));
  const dinf = box('dinf', fullBox('dref', 0, 0, u32(1), fullBox('url ', 0, 1))); // flag 1: media is in this file
  const minf = box('minf', fullBox('vmhd', 0, 1, zeros(8)), dinf, stbl(track));
  return box('moov', mvhd, box('trak', tkhd, box('mdia', mdhd, hdlr, minf)));
}

export function ftyp(): Bytes {
  return box('ftyp', fourcc('isom'), u32(0x200), concat(['isom', 'iso2', 'avc1', 'mp41'].map(fourcc)));
}

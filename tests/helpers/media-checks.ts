/**
 * Minimal, independent parsers for the media files the gateway serves, so tests check real files
 * rather than trusting the producer: PNG (signature, IHDR with its CRC), ISO-BMFF/MP4 (box tree,
 * mvhd, stsd sample entries) and RIFF/WAVE (fmt and data chunks).
 * @see https://www.w3.org/TR/png-3/  ISO/IEC 14496-12  http://soundfile.sapp.org/doc/WaveFormat/
 */

const ascii = (bytes: Uint8Array, start: number, length: number) =>
  String.fromCharCode(...bytes.subarray(start, start + length));
const view = (bytes: Uint8Array) => new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);

export const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

export interface PngInfo {
  width: number;
  height: number;
  bitDepth: number;
  colourType: number;
  /** Chunk types in file order. */
  chunks: string[];
  /** Every chunk's CRC matched its type and data. */
  crcOk: boolean;
}

/** Throws unless `bytes` is a PNG whose first chunk is IHDR. */
export function parsePng(bytes: Uint8Array): PngInfo {
  if (bytes.length < 33 || PNG_SIGNATURE.some((b, i) => bytes[i] !== b)) throw new Error('not a PNG: bad signature');
  const dv = view(bytes);
  const chunks: string[] = [];
  let crcOk = true;
  let offset = 8;
  while (offset + 12 <= bytes.length) {
    const length = dv.getUint32(offset);
    const type = ascii(bytes, offset + 4, 4);
    if (offset + 12 + length > bytes.length) throw new Error(`PNG chunk ${type} runs past the end`);
    const crc = dv.getUint32(offset + 8 + length);
    if (Bun.hash.crc32(bytes.subarray(offset + 4, offset + 8 + length)) >>> 0 !== crc) crcOk = false;
    chunks.push(type);
    offset += 12 + length;
    if (type === 'IEND') break;
  }
  if (chunks[0] !== 'IHDR') throw new Error(`PNG first chunk is ${chunks[0]}, not IHDR`);
  if (dv.getUint32(8) !== 13) throw new Error('PNG IHDR length is not 13');
  return {
    width: dv.getUint32(16),
    height: dv.getUint32(20),
    bitDepth: bytes[24]!,
    colourType: bytes[25]!,
    chunks,
    crcOk,
  };
}

export interface Box {
  type: string;
  /** Offset of the box header in the file. */
  start: number;
  /** Offset of the payload (after size/type, and largesize when present). */
  payload: number;
  end: number;
  children: Box[];
}

const CONTAINERS = new Set(['moov', 'trak', 'mdia', 'minf', 'stbl', 'edts', 'dinf', 'udta', 'mvex', 'moof', 'traf']);

function parseBoxes(bytes: Uint8Array, start: number, end: number): Box[] {
  const dv = view(bytes);
  const boxes: Box[] = [];
  let offset = start;
  while (offset + 8 <= end) {
    let size = dv.getUint32(offset);
    const type = ascii(bytes, offset + 4, 4);
    let payload = offset + 8;
    if (size === 1) {
      size = Number(dv.getBigUint64(offset + 8));
      payload += 8;
    } else if (size === 0) {
      size = end - offset;
    }
    if (size < payload - offset || offset + size > end)
      throw new Error(`MP4 box ${type} at ${offset} has a bad size ${size}`);
    const box: Box = { type, start: offset, payload, end: offset + size, children: [] };
    if (CONTAINERS.has(type)) box.children = parseBoxes(bytes, payload, box.end);
    // stsd is a full box (4 bytes version/flags) with an entry count, then the sample entries.
    if (type === 'stsd') box.children = parseBoxes(bytes, payload + 8, box.end);
    boxes.push(box);
    offset += size;
  }
  if (offset !== end) throw new Error(`MP4 boxes do not tile their parent: ${offset} != ${end}`);
  return boxes;
}

/** Depth-first search of a box tree by type path, e.g. `['moov', 'trak', 'mdia']`. */
export function findBox(boxes: Box[], path: string[]): Box | undefined {
  const [head, ...rest] = path;
  for (const box of boxes) {
    if (box.type !== head) continue;
    if (rest.length === 0) return box;
    const found = findBox(box.children, rest);
    if (found) return found;
  }
  return undefined;
}

export interface Mp4Info {
  topLevel: string[];
  majorBrand: string;
  /** mvhd duration / timescale. */
  durationSeconds: number;
  movieTimescale: number;
  /** Sample entry types of every track's stsd, e.g. ['avc1']. */
  sampleEntries: string[];
  /** width × height of the first visual sample entry. */
  width?: number;
  height?: number;
  sampleCount?: number;
}

export function parseMp4(bytes: Uint8Array): Mp4Info {
  const dv = view(bytes);
  const boxes = parseBoxes(bytes, 0, bytes.length);
  if (boxes[0]?.type !== 'ftyp') throw new Error(`MP4 starts with ${boxes[0]?.type}, not ftyp`);
  const mvhd = findBox(boxes, ['moov', 'mvhd']);
  if (!mvhd) throw new Error('MP4 has no moov/mvhd');
  const version = bytes[mvhd.payload]!;
  const timescale = dv.getUint32(mvhd.payload + (version === 1 ? 20 : 12));
  const duration = version === 1 ? Number(dv.getBigUint64(mvhd.payload + 24)) : dv.getUint32(mvhd.payload + 16);
  const sampleEntries: string[] = [];
  let width: number | undefined;
  let height: number | undefined;
  for (const trak of findBox(boxes, ['moov'])?.children.filter((b) => b.type === 'trak') ?? []) {
    const stsd = findBox(trak.children, ['mdia', 'minf', 'stbl', 'stsd']);
    for (const entry of stsd?.children ?? []) {
      sampleEntries.push(entry.type);
      // VisualSampleEntry: 6 reserved + 2 data_reference_index + 16 predefined/reserved, then width, height.
      if (width === undefined && ['avc1', 'avc3', 'hvc1', 'hev1'].includes(entry.type)) {
        width = dv.getUint16(entry.payload + 24);
        height = dv.getUint16(entry.payload + 26);
      }
    }
  }
  const stsz = findBox(boxes, ['moov', 'trak', 'mdia', 'minf', 'stbl', 'stsz']);
  return {
    topLevel: boxes.map((b) => b.type),
    majorBrand: ascii(bytes, boxes[0].payload, 4),
    durationSeconds: duration / timescale,
    movieTimescale: timescale,
    sampleEntries,
    width,
    height,
    sampleCount: stsz ? dv.getUint32(stsz.payload + 8) : undefined,
  };
}

export interface WavInfo {
  audioFormat: number;
  channels: number;
  sampleRate: number;
  byteRate: number;
  blockAlign: number;
  bitsPerSample: number;
  dataBytes: number;
  durationSeconds: number;
  /** The RIFF size field equals the file length minus 8. */
  riffSizeOk: boolean;
}

export function parseWav(bytes: Uint8Array): WavInfo {
  if (ascii(bytes, 0, 4) !== 'RIFF' || ascii(bytes, 8, 4) !== 'WAVE') throw new Error('not a RIFF/WAVE file');
  const dv = view(bytes);
  let fmt: Omit<WavInfo, 'dataBytes' | 'durationSeconds' | 'riffSizeOk'> | undefined;
  let dataBytes: number | undefined;
  let offset = 12;
  while (offset + 8 <= bytes.length) {
    const id = ascii(bytes, offset, 4);
    const size = dv.getUint32(offset + 4, true);
    const body = offset + 8;
    if (body + size > bytes.length) throw new Error(`WAV chunk ${id} runs past the end`);
    if (id === 'fmt ') {
      fmt = {
        audioFormat: dv.getUint16(body, true),
        channels: dv.getUint16(body + 2, true),
        sampleRate: dv.getUint32(body + 4, true),
        byteRate: dv.getUint32(body + 8, true),
        blockAlign: dv.getUint16(body + 12, true),
        bitsPerSample: dv.getUint16(body + 14, true),
      };
    } else if (id === 'data') {
      dataBytes = size;
    }
    offset = body + size + (size % 2);
  }
  if (!fmt) throw new Error('WAV has no fmt chunk');
  if (dataBytes === undefined) throw new Error('WAV has no data chunk');
  return {
    ...fmt,
    dataBytes,
    durationSeconds: dataBytes / fmt.byteRate,
    riffSizeOk: dv.getUint32(4, true) === bytes.length - 8,
  };
}

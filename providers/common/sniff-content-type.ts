/**
 * Content type from magic bytes, for bytes that come from outside (uploads, provider outputs,
 * voice samples) whose declared type cannot be trusted or is missing.
 * @see https://mimesniff.spec.whatwg.org/#matching-a-mime-type-pattern
 */

/** How many leading bytes `sniffContentType` looks at. */
export const SNIFF_BYTES = 512;
export const OCTET_STREAM = 'application/octet-stream';

const ascii = (bytes: Uint8Array, at: number, text: string) => {
  if (bytes.length < at + text.length) return false;
  for (let i = 0; i < text.length; i++) if (bytes[at + i] !== text.charCodeAt(i)) return false;
  return true;
};
const startsWith = (bytes: Uint8Array, sig: number[]) => sig.every((b, i) => bytes[i] === b);

export function sniffContentType(head: Uint8Array): string {
  const b = head;
  if (startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (startsWith(b, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (ascii(b, 0, 'GIF87a') || ascii(b, 0, 'GIF89a')) return 'image/gif';
  if (ascii(b, 0, 'RIFF')) {
    if (ascii(b, 8, 'WEBP')) return 'image/webp';
    if (ascii(b, 8, 'WAVE')) return 'audio/wav';
    if (ascii(b, 8, 'AVI ')) return 'video/x-msvideo';
  }
  if (ascii(b, 4, 'ftyp')) return isoMediaType(b);
  if (startsWith(b, [0x1a, 0x45, 0xdf, 0xa3]))
    return includesAscii(b.subarray(0, 64), 'webm') ? 'video/webm' : 'video/x-matroska';
  if (ascii(b, 0, 'ID3')) return 'audio/mpeg';
  if (b[0] === 0xff && b.length > 1 && ((b[1] as number) & 0xe0) === 0xe0) {
    // Frame sync; layer bits 00 mean an ADTS AAC stream rather than MPEG audio.
    return ((b[1] as number) & 0x06) === 0 ? 'audio/aac' : 'audio/mpeg';
  }
  if (ascii(b, 0, 'OggS')) return includesAscii(b.subarray(0, 64), 'theora') ? 'video/ogg' : 'audio/ogg';
  if (ascii(b, 0, 'fLaC')) return 'audio/flac';
  if (ascii(b, 0, '%PDF-')) return 'application/pdf';
  return sniffText(b) ?? OCTET_STREAM;
}

/** ISO base media (`ftyp` box): the major brand tells audio, QuickTime, still images, video apart. */
function isoMediaType(b: Uint8Array): string {
  const brand = String.fromCharCode(...b.subarray(8, 12));
  if (brand === 'M4A ' || brand === 'M4B ' || brand === 'M4P ') return 'audio/mp4';
  if (brand === 'qt  ') return 'video/quicktime';
  if (brand === 'avif' || brand === 'avis') return 'image/avif';
  if (brand === 'heic' || brand === 'heix' || brand === 'mif1') return 'image/heic';
  return 'video/mp4';
}

function includesAscii(bytes: Uint8Array, text: string): boolean {
  for (let i = 0; i + text.length <= bytes.length; i++) if (ascii(bytes, i, text)) return true;
  return false;
}

/** UTF-8 text without control characters: JSON when it looks like it, SVG, else plain text. */
function sniffText(b: Uint8Array): string | undefined {
  if (b.length === 0) return undefined;
  let text: string;
  try {
    // stream: true tolerates a multi-byte character cut off at the end of the sample.
    text = new TextDecoder('utf-8', { fatal: true }).decode(b, { stream: true });
  } catch {
    return undefined;
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what marks binary content
  if (/[\x00-\x08\x0b\x0e-\x1f\x7f]/.test(text)) return undefined;
  const start = text.replace(/^\uFEFF/, '').trimStart();
  if (start.startsWith('{') || start.startsWith('[')) return 'application/json';
  if (/^(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*<svg[\s>]/i.test(start)) return 'image/svg+xml';
  return 'text/plain; charset=utf-8';
}

import { OCTET_STREAM, SNIFF_BYTES, sniffContentType } from './sniff-content-type.ts';
import type { MediaOutput } from '../types.ts';
import { UpstreamAnswerError } from './media-sync-job.ts';
import { readUpstreamBytes } from './upstream-body.ts';

/** Raw sample formats carry no signature: their type comes from the format that was asked for. */
const isRawAudio = (type: string | undefined) => type !== undefined && /^audio\/(l16|pcmu|pcma|basic)\b/i.test(type);

/**
 * A speech API's answer body as one audio output. The stored type comes from the bytes where
 * they have a signature (MP3, WAV, Ogg, FLAC, AAC), else from the requested format; a body that
 * reads as text or JSON is not audio, whatever the status said.
 */
export async function audioOutput(res: Response, formatType: string | undefined): Promise<MediaOutput> {
  const body = await readUpstreamBytes(res);
  if (body.byteLength === 0) throw new UpstreamAnswerError('the upstream answered with no audio');
  const sniffed = sniffContentType(body.subarray(0, SNIFF_BYTES));
  if (sniffed.startsWith('audio/') || sniffed === 'video/webm') return { kind: 'audio', body, contentType: sniffed };
  if (isRawAudio(formatType) || sniffed === OCTET_STREAM) {
    const declared = res.headers.get('content-type') ?? '';
    const contentType = formatType ?? (declared.startsWith('audio/') ? declared : OCTET_STREAM);
    return { kind: 'audio', body, contentType };
  }
  const text = new TextDecoder().decode(body.subarray(0, 200));
  throw new UpstreamAnswerError(`the upstream answered ${sniffed}, not audio: ${text}`);
}

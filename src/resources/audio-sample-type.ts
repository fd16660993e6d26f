import { mediaType } from '../../providers/common/file-extension.ts';

/**
 * Sniffed types a voice sample may have (mp3, wav, ogg, opus, m4a, flac, webm). Opus
 * travels in Ogg (or WebM), so it sniffs as one of those; an audio-only WebM carries the same
 * EBML header as a video one, so `video/webm` counts too.
 */
const AUDIO_SAMPLE_TYPES = new Set([
  'audio/mpeg',
  'audio/wav',
  'audio/ogg',
  'audio/opus',
  'audio/mp4',
  'audio/flac',
  'audio/webm',
  'video/webm',
]);

export const AUDIO_SAMPLE_FORMATS = 'mp3, wav, ogg, opus, m4a, flac or webm';

export function isAudioSampleType(contentType: string): boolean {
  return AUDIO_SAMPLE_TYPES.has(mediaType(contentType));
}

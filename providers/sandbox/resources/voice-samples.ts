import { sandboxSpeech } from '../media/index.ts';
import type { ResourceAsset } from '../../common/resources.ts';
import { SANDBOX_SPEECH_VOICES } from './speech-voices.ts';
import { SANDBOX_STRING_VOICES, voiceDisplayName } from './string-voices.ts';

/**
 * Recordings of the voice presets (string-id `sample`, speech `preview_url`): real WAVs from the
 * sandbox speech engine, each saying the voice's own introduction. They are a pure function of
 * the name, so every instance serves the same bytes at the same URL with nothing stored.
 */
const TEXTS = new Map<string, string>([
  ...SANDBOX_STRING_VOICES.map(
    (v) => [stringVoiceSampleName(v.id), `Hi, I am ${voiceDisplayName(v.id)}. ${v.description}`] as const,
  ),
  ...SANDBOX_SPEECH_VOICES.map((v) => [speechVoicePreviewName(v.voice_id), v.preview] as const),
]);

export function stringVoiceSampleName(id: string): string {
  return `voice-${id}.wav`;
}

export function speechVoicePreviewName(voiceId: string): string {
  return `speech-${voiceId}.wav`;
}

// Generated on first request and kept: 38 clips of at most a few hundred KB each.
const cache = new Map<string, Uint8Array>();

export function voiceSample(name: string): ResourceAsset | undefined {
  const text = TEXTS.get(name);
  if (text === undefined) return undefined;
  let body = cache.get(name);
  if (!body) {
    body = sandboxSpeech(text);
    cache.set(name, body);
  }
  return { body, contentType: 'audio/wav' };
}

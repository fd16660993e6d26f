import { encodeWav } from './wav.ts';

/**
 * The sandbox text-to-speech output: not words, but a speech-like rhythm of soft tone bursts,
 * one per character, so clip length tracks the text the way real TTS does. 16 kHz mono is the
 * usual telephony/ASR rate and keeps a 5-minute cap under 10 MB.
 */
export const SPEECH_SAMPLE_RATE = 16_000;
export const SPEECH_SECONDS_PER_CHAR = 0.06;
export const SPEECH_MIN_SECONDS = 0.5;
export const SPEECH_MAX_SECONDS = 300;

const SLOT = Math.round(SPEECH_SECONDS_PER_CHAR * SPEECH_SAMPLE_RATE);
const AMPLITUDE = 0.25 * 32767; // about -12 dBFS: audible but never harsh or clipping

/** Clip length in seconds: ~60 ms per character (code point), clamped to 0.5 s..5 min. */
export function speechSeconds(text: string): number {
  const chars = Array.from(text).length;
  return Math.min(SPEECH_MAX_SECONDS, Math.max(SPEECH_MIN_SECONDS, chars * SPEECH_SECONDS_PER_CHAR));
}

export function speechSampleCount(text: string): number {
  return Math.round(speechSeconds(text) * SPEECH_SAMPLE_RATE);
}

/**
 * One character's burst: a voice-like fundamental (90..250 Hz from the code point, with a gentle
 * downward drift across the utterance like declarative intonation) plus two weaker harmonics, under
 * a Hann envelope so bursts start and stop at zero without clicks.
 */
function writeBurst(out: Int16Array, start: number, length: number, code: number, progress: number): void {
  const f0 = (90 + ((code * 37) % 17) * 10) * (1.1 - 0.2 * progress);
  const w = (2 * Math.PI * f0) / SPEECH_SAMPLE_RATE;
  for (let n = 0; n < length && start + n < out.length; n++) {
    const envelope = 0.5 - 0.5 * Math.cos((2 * Math.PI * n) / (length - 1));
    const wave = Math.sin(w * n) + 0.4 * Math.sin(2 * w * n) + 0.15 * Math.sin(3 * w * n);
    out[start + n] = Math.round((AMPLITUDE * envelope * wave) / 1.55);
  }
}

export function sandboxSpeechSamples(text: string): Int16Array {
  const out = new Int16Array(speechSampleCount(text));
  const chars = Array.from(text);
  const slots = Math.min(chars.length, Math.floor(out.length / SLOT));
  for (let i = 0; i < slots; i++) {
    const char = chars[i]!;
    // Spaces and punctuation stay silent: they become the pauses between "words" and "sentences".
    if (!/[\p{L}\p{N}]/u.test(char)) continue;
    writeBurst(out, i * SLOT, Math.round(SLOT * 0.85), char.codePointAt(0)!, i / Math.max(1, chars.length));
  }
  return out;
}

/** WAV bytes (16-bit PCM mono, 16 kHz) for the sandbox speech of `text`. */
export function sandboxSpeech(text: string): Uint8Array {
  return encodeWav(sandboxSpeechSamples(text), SPEECH_SAMPLE_RATE);
}

import * as v from 'valibot';
import { boundedString } from '../common/input-schema.ts';
import type { MediaModel } from '../types.ts';
import { sandboxSpeech } from './media/index.ts';
import { SANDBOX_SPEECH_VOICE_IDS } from './resources/speech-voices.ts';
import { commonFields, sandboxModel } from './sandbox-job.ts';

/** `sandbox/speech`: a real WAV whose length follows the text; $0.0001 per character, at least $0.001. */
const speechJob = sandboxModel({
  schema: v.object({
    text: v.pipe(
      v.string('must be a string'),
      v.nonEmpty('must not be empty'),
      v.maxLength(100_000, 'must be at most 100000 characters'),
    ),
    voice_id: v.optional(v.pipe(boundedString(200), v.nonEmpty('must not be empty'))),
    ...commonFields,
  }),
  price: (input) => Math.max(0.001, [...input.text].length * 0.0001),
  produce: (input) => [{ kind: 'audio' as const, body: sandboxSpeech(input.text), contentType: 'audio/wav' }],
});

export const sandboxSpeechModel: MediaModel = {
  ...speechJob,
  // A built-in voice, or a custom voice of the caller's own account (spec: voice ids from
  // elsewhere cannot be used; another account's voice is as unknown as a made-up one).
  async validate(input, ctx) {
    const voiceId = input.voice_id;
    if (typeof voiceId !== 'string' || SANDBOX_SPEECH_VOICE_IDS.has(voiceId) || (await ctx.customVoice(voiceId)))
      return [];
    return [
      {
        path: 'voice_id',
        message: `unknown voice "${voiceId}": use a voice of GET /v1/resources/<provider>/voices or a custom voice this account created`,
      },
    ];
  },
};

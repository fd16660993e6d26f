import * as v from 'valibot';
import { sandboxSpeech } from './media/index.ts';
import { commonFields, sandboxModel } from './sandbox-job.ts';

/** `sandbox/speech`: a real WAV whose length follows the text; $0.0001 per character, at least $0.001. */
export const sandboxSpeechModel = sandboxModel({
  schema: v.object({
    text: v.pipe(v.string('must be a string'), v.nonEmpty('must not be empty'), v.maxLength(100_000, 'must be at most 100000 characters')),
    voice_id: v.optional(v.pipe(v.string('must be a string'), v.nonEmpty('must not be empty'))),
    ...commonFields,
  }),
  price: (input) => Math.max(0.001, [...input.text].length * 0.0001),
  produce: (input) => [{ kind: 'audio' as const, body: sandboxSpeech(input.text), contentType: 'audio/wav' }],
});

import * as v from 'valibot';
import { boundedString } from '../common/input-schema.ts';
import { sandboxVideo } from './media/index.ts';
import { normaliseStringVoice } from './resources/string-voices.ts';
import { SANDBOX_VIDEO_VOICE_IDS } from './resources/video-voices.ts';
import { commonFields, sandboxModel } from './sandbox-job.ts';

const PRICE_PER_SECOND = 0.05;
const FRAME: Record<'480p' | '720p' | '1080p', { width: number; height: number }> = {
  '480p': { width: 854, height: 480 },
  '720p': { width: 1280, height: 720 },
  '1080p': { width: 1920, height: 1080 },
};

/** A string-id voice preset; `lapetus` (a common misreading) becomes `iapetus`. */
const stringVoice = v.pipe(
  v.string('must be a string'),
  v.check(
    (id) => normaliseStringVoice(id) !== undefined,
    'must be a voice id of GET /v1/resources/<provider>/voices/sandbox-video-1',
  ),
  v.transform((id) => normaliseStringVoice(id) as string),
);

/** An integer-id voice preset, bare (`3`) or as the contract words it (`{voice_id: 3}`). */
const integerVoice = v.pipe(
  v.unknown(),
  v.transform((item) =>
    typeof item === 'object' && item !== null && 'voice_id' in item ? (item as { voice_id: unknown }).voice_id : item,
  ),
  v.number('must be an integer voice id or {voice_id}'),
  v.integer('must be an integer voice id'),
  v.check((id) => SANDBOX_VIDEO_VOICE_IDS.has(id), 'must be a voice id of GET /v1/resources/<provider>/clips/voices'),
);

/**
 * `sandbox/video`: a real, playable H.264 MP4 of the asked duration, $0.05 per second. Frames
 * are raw I_PCM macroblocks (no encoder library), so the asked 16:9 frame is scaled to fit 256×256
 * (256×144) at 6 fps to keep a 10 s clip near 3 MB; see media/mp4.ts.
 */
export const sandboxVideoModel = sandboxModel({
  schema: v.pipe(
    v.object({
      prompt: v.pipe(boundedString(), v.nonEmpty('must not be empty')),
      duration: v.optional(v.picklist([5, 10], 'must be 5 or 10'), 5),
      resolution: v.optional(v.picklist(['480p', '720p', '1080p'], 'must be 480p, 720p or 1080p'), '720p'),
      start_image_url: v.optional(v.pipe(boundedString(8192), v.url('must be an absolute URL'))),
      motion_id: v.optional(v.pipe(boundedString(200), v.nonEmpty('must not be empty'))),
      voice: v.optional(stringVoice),
      voices: v.optional(
        v.pipe(
          v.array(integerVoice, 'must be an array'),
          v.minLength(1, 'must not be empty'),
          v.maxLength(10, 'must hold at most 10 voices'),
        ),
      ),
      ...commonFields,
    }),
    // Spec: a string-id voice needs an image or character reference; here that is the start image.
    v.forward(
      v.partialCheck(
        [['voice'], ['start_image_url']],
        (input) => input.voice === undefined || input.start_image_url !== undefined,
        'a string-id voice needs an image reference: give start_image_url',
      ),
      ['voice'],
    ),
  ),
  price: (input) => input.duration * PRICE_PER_SECOND,
  produce: (input) => [
    {
      kind: 'video' as const,
      body: sandboxVideo(input.prompt, { seconds: input.duration, ...FRAME[input.resolution] }),
      contentType: 'video/mp4',
    },
  ],
});

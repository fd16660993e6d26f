import * as v from 'valibot';
import { sandboxVideo } from './media/index.ts';
import { commonFields, sandboxModel } from './sandbox-job.ts';

const PRICE_PER_SECOND = 0.05;
const FRAME: Record<'480p' | '720p' | '1080p', { width: number; height: number }> = {
  '480p': { width: 854, height: 480 },
  '720p': { width: 1280, height: 720 },
  '1080p': { width: 1920, height: 1080 },
};

/**
 * `sandbox/video`: a real, playable H.264 MP4 of the asked duration, $0.05 per second. Frames
 * are raw I_PCM macroblocks (no encoder library), so the asked 16:9 frame is scaled to fit 256×256
 * (256×144) at 6 fps to keep a 10 s clip near 3 MB; see media/mp4.ts.
 */
export const sandboxVideoModel = sandboxModel({
  schema: v.object({
    prompt: v.pipe(v.string('must be a string'), v.nonEmpty('must not be empty')),
    duration: v.optional(v.picklist([5, 10], 'must be 5 or 10'), 5),
    resolution: v.optional(v.picklist(['480p', '720p', '1080p'], 'must be 480p, 720p or 1080p'), '720p'),
    start_image_url: v.optional(v.pipe(v.string('must be a string'), v.url('must be an absolute URL'))),
    motion_id: v.optional(v.pipe(v.string('must be a string'), v.nonEmpty('must not be empty'))),
    voice: v.optional(v.pipe(v.string('must be a string'), v.nonEmpty('must not be empty'))),
    ...commonFields,
  }),
  price: (input) => input.duration * PRICE_PER_SECOND,
  produce: (input) => [{ kind: 'video' as const, body: sandboxVideo(input.prompt, { seconds: input.duration, ...FRAME[input.resolution] }), contentType: 'video/mp4' }],
});

import type { MotionCategory, MotionPreset } from '../../common/resources.ts';
import { stableUuid } from '../../common/resources-stable-uuid.ts';

const NAMES: Readonly<Record<MotionCategory, readonly string[]>> = {
  new: [
    'Dolly Zoom Reveal',
    'Hyperlapse Glide',
    'Liquid Morph',
    'Neon Pulse',
    'Paper Fold Transition',
    'Time Freeze',
    'Magnetic Pull',
    'Prism Split',
  ],
  star_end_frame: [
    'Start to End Morph',
    'Seamless Loop',
    'Day to Night',
    'Sketch to Photo',
    'Season Change',
    'Age Progression',
    'Before and After',
    'Object Transform',
  ],
  camera_control: [
    'Dolly In',
    'Dolly Out',
    'Pan Left',
    'Pan Right',
    'Tilt Up',
    'Orbit 360',
    'Crane Up',
    'Handheld Shake',
  ],
  viral: [
    'Dance Challenge',
    'Hug Me',
    'Muscle Flex',
    'Kiss Cam',
    'Zoom Out to Earth',
    'Baby Face',
    'Cartoon Me',
    'Outfit Swap',
  ],
  vfx: [
    'Explosion',
    'Disintegrate',
    'Levitation',
    'Lightning Strike',
    'Fire Aura',
    'Ice Freeze',
    'Portal Open',
    'Melting',
  ],
  ugc: [
    'Product Unboxing',
    'Selfie Talk',
    'Try-On Haul',
    'Review to Camera',
    'Hold Up Product',
    'Walk and Talk',
    'Reaction Shot',
    'Testimonial',
  ],
};

/**
 * The motion presets of `clips`, newest category first. Ids are derived from category and name,
 * so a `motion_id` a client saved stays valid across restarts and instances.
 */
export const SANDBOX_MOTIONS: readonly MotionPreset[] = Object.entries(NAMES).flatMap(([category, names]) =>
  names.map((name) => ({
    id: stableUuid('sandbox.motions', `${category}/${name}`),
    name,
    category: category as MotionCategory,
  })),
);

import * as v from 'valibot';
import { boundedString } from '../common/input-schema.ts';
import { sandboxImage } from './media/index.ts';
import { commonFields, sandboxModel } from './sandbox-job.ts';

const side = v.optional(
  v.pipe(
    v.number('must be a number'),
    v.integer('must be an integer'),
    v.minValue(64, 'must be at least 64'),
    v.maxValue(2048, 'must be at most 2048'),
  ),
  512,
);
const PRICE_PER_IMAGE = 0.01;

/**
 * `sandbox/image`: real PNGs at the asked size, $0.01 each. `max_sequential_images` is a ceiling
 * the model decides under; the sandbox makes ⌈ceiling / 2⌉ images, so the charge-the-ceiling,
 * refund-the-rest path runs for every ceiling above 1.
 */
export const sandboxImageModel = sandboxModel({
  schema: v.object({
    prompt: v.pipe(boundedString(), v.nonEmpty('must not be empty')),
    width: side,
    height: side,
    max_sequential_images: v.optional(
      v.pipe(
        v.number('must be a number'),
        v.integer('must be an integer'),
        v.minValue(1, 'must be at least 1'),
        v.maxValue(15, 'must be at most 15'),
      ),
      1,
    ),
    ...commonFields,
  }),
  price: (input) => input.max_sequential_images * PRICE_PER_IMAGE,
  finalPrice: (_input, outputs) => outputs.length * PRICE_PER_IMAGE,
  produce: (input) =>
    Array.from({ length: Math.ceil(input.max_sequential_images / 2) }, (_, i) => ({
      kind: 'image' as const,
      body: sandboxImage(input.prompt, input.width, input.height, i),
      contentType: 'image/png',
    })),
});

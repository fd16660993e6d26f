import { UpstreamHealth } from '../common/upstream-health.ts';
import type { ProviderFactory } from '../types.ts';
import { falModel } from './fal-model.ts';
import { FalQueue } from './fal-queue.ts';
import { falSettings } from './fal-settings.ts';

/**
 * fal (kind `fal`): image, video and audio models through fal's queue API, polled with backoff.
 * @see https://docs.fal.ai/model-endpoints/queue
 */
export const createFalProvider: ProviderFactory = (config) => {
  const health = new UpstreamHealth();
  const queue = new FalQueue(falSettings(config), health);
  return { id: config.id, kind: 'fal', media: { model: (model) => falModel(model, config, queue) }, health };
};

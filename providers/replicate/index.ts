import { UpstreamHealth } from '../common/upstream-health.ts';
import type { ProviderFactory } from '../types.ts';
import { ReplicateApi } from './replicate-api.ts';
import { replicateModel } from './replicate-model.ts';
import { replicateSettings } from './replicate-settings.ts';
import { replicateWebhook } from './replicate-webhook.ts';

/**
 * Replicate (kind `replicate`): image, video and audio models through the predictions API;
 * completion by Replicate's signed webhook when `PUBLIC_URL` is public, else by polling.
 * @see https://replicate.com/docs/reference/http
 */
export const createReplicateProvider: ProviderFactory = (config, host) => {
  const settings = replicateSettings(config, host);
  const health = new UpstreamHealth();
  const api = new ReplicateApi(settings, health);
  return {
    id: config.id,
    kind: 'replicate',
    media: { model: (model) => replicateModel(model, config, settings, api), webhook: replicateWebhook(settings) },
    health,
  };
};

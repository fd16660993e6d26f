import { ConfigError } from '../config/config-error.ts';
import { UpstreamHealth } from '../common/upstream-health.ts';
import type { ProviderFactory } from '../types.ts';
import { ElevenLabsApi } from './elevenlabs-api.ts';
import { elevenLabsResources } from './resources.ts';
import { elevenLabsTtsModel } from './tts-model.ts';
import { ElevenLabsVoiceList } from './voice-list.ts';

/**
 * ElevenLabs: text to speech by `voice_id` (category `audio` models; `upstream_model` is the
 * `model_id`, e.g. `eleven_multilingual_v2`), its voice list and instant voice cloning as
 * provider resources. `base_url` is the API root without `/v1` (default https://api.elevenlabs.io).
 * Provider `options.remove_background_noise` (default false) is passed to voice cloning.
 * @see https://elevenlabs.io/docs/api-reference/introduction
 */
export const createElevenLabsProvider: ProviderFactory = (config) => {
  const removeBackgroundNoise = config.options?.remove_background_noise ?? false;
  if (typeof removeBackgroundNoise !== 'boolean')
    throw new ConfigError(`providers[${config.id}].options.remove_background_noise: expected true or false`);
  const health = new UpstreamHealth();
  const api = new ElevenLabsApi(config, health);
  const voices = new ElevenLabsVoiceList(api);
  return {
    id: config.id,
    kind: 'elevenlabs',
    media: { model: (model) => (model.category === 'audio' ? elevenLabsTtsModel(model, api, voices) : undefined) },
    resources: elevenLabsResources(api, voices, { removeBackgroundNoise }),
    health,
  };
};

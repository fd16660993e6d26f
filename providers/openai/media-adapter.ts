import type { ProviderConfig } from '../config/config-schema.ts';
import type { UpstreamHealth } from '../common/upstream-health.ts';
import type { MediaAdapter } from '../types.ts';
import { openAIImageModel } from './media-images.ts';
import { openAISpeechModel } from './media-speech.ts';

/**
 * OpenAI's synchronous media endpoints, by the catalog entry's category: `image` →
 * `/images/generations`, `audio` → `/audio/speech`. Video (and anything else) is not served.
 * @see https://platform.openai.com/docs/api-reference/images
 * @see https://platform.openai.com/docs/api-reference/audio
 */
export function createOpenAIMedia(config: ProviderConfig, health?: UpstreamHealth): MediaAdapter {
  return {
    model(model) {
      if (model.category === 'image') return openAIImageModel(config, model, health);
      if (model.category === 'audio') return openAISpeechModel(config, model, health);
      return undefined;
    },
  };
}

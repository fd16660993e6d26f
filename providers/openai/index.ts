import { UpstreamHealth } from '../common/upstream-health.ts';
import type { ProviderFactory } from '../types.ts';
import { createChatAdapter } from './chat-adapter.ts';
import { createEmbeddingsAdapter } from './embeddings-adapter.ts';
import { createOpenAIMedia } from './media-adapter.ts';

export const createOpenAIProvider: ProviderFactory = (config) => {
  // Fed by the media calls; `/readyz` reports the provider failing after repeated upstream errors.
  const health = new UpstreamHealth();
  return {
    id: config.id,
    kind: 'openai',
    llm: createChatAdapter(config),
    embeddings: createEmbeddingsAdapter(config),
    media: createOpenAIMedia(config, health),
    health,
  };
};

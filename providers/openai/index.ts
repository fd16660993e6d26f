import type { ProviderFactory } from '../types.ts';
import { createChatAdapter } from './chat-adapter.ts';

export const createOpenAIProvider: ProviderFactory = (config) => ({
  id: config.id,
  kind: 'openai',
  llm: createChatAdapter(config),
});

import type { ProviderFactory } from '../types.ts';
import { createMessagesAdapter } from './messages-adapter.ts';

export const createAnthropicProvider: ProviderFactory = (config) => ({
  id: config.id,
  kind: 'anthropic',
  llm: createMessagesAdapter(config),
});

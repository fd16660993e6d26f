import type { ProviderFactory } from '../types.ts';
import { echoAdapter } from './echo-adapter.ts';
import { sandboxEmbeddings } from './embed-model.ts';
import { sandboxMedia } from './media-adapter.ts';
import { sandboxResources } from './resources/index.ts';

/** The offline, deterministic provider of docs/api-contract.md. */
export const createSandboxProvider: ProviderFactory = (config) => ({
  id: config.id,
  kind: 'sandbox',
  llm: echoAdapter,
  embeddings: sandboxEmbeddings,
  media: sandboxMedia,
  resources: sandboxResources,
});

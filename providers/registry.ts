import type { ProviderConfig } from './config/config-schema.ts';
import { createAnthropicProvider } from './anthropic/index.ts';
import { createElevenLabsProvider } from './elevenlabs/index.ts';
import { createFalProvider } from './fal/index.ts';
import { createOpenAIProvider } from './openai/index.ts';
import { createOpenAIResponsesProvider } from './openai-responses/index.ts';
import { createReplicateProvider } from './replicate/index.ts';
import { createSandboxProvider } from './sandbox/index.ts';
import type { Provider, ProviderFactory, ProviderHost } from './types.ts';

/**
 * Adapter kinds a `GATEWAY_CONFIG` provider may name: each kind is one folder in providers/.
 * Adding a provider touches only its folder and this table.
 */
const FACTORIES = {
  sandbox: createSandboxProvider,
  openai: createOpenAIProvider,
  'openai-responses': createOpenAIResponsesProvider,
  anthropic: createAnthropicProvider,
  elevenlabs: createElevenLabsProvider,
  replicate: createReplicateProvider,
  fal: createFalProvider,
} satisfies Record<string, ProviderFactory>;

export type ProviderKind = keyof typeof FACTORIES;
export const PROVIDER_KINDS = Object.keys(FACTORIES) as ProviderKind[];

export function isProviderKind(kind: string): kind is ProviderKind {
  return Object.hasOwn(FACTORIES, kind);
}

export function createProviders(configs: ProviderConfig[], host?: ProviderHost): Map<string, Provider> {
  const providers = new Map<string, Provider>();
  for (const config of configs) {
    if (!isProviderKind(config.kind)) throw new Error(`unknown provider kind ${config.kind}`);
    providers.set(config.id, FACTORIES[config.kind](config, host));
  }
  return providers;
}

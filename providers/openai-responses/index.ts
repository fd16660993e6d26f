import type { ProviderFactory } from '../types.ts';
import { createResponsesAdapter } from './responses-adapter.ts';

/** `kind: openai-responses`: LLMs on an upstream that speaks the Responses API (no media). */
export const createOpenAIResponsesProvider: ProviderFactory = (config) => ({
  id: config.id,
  kind: 'openai-responses',
  llm: createResponsesAdapter(config),
});

import type { ProviderConfig } from '../src/config/gateway-config.ts';
import type { CanonicalRequest, CanonicalResponse, StreamEvent, TranslationWarning } from '../translators/canonical/index.ts';

/** What a provider is told about the model being called. */
export interface ModelRef {
  /** Gateway id (`acme/chat-large`): what clients see, and what responses must name. */
  id: string;
  /** The upstream's own model name. */
  upstreamModel: string;
}

export interface LlmCall {
  request: CanonicalRequest;
  model: ModelRef;
  /** Aborted when the client goes away: the upstream request is cancelled at once. */
  signal: AbortSignal;
}

/** Upstream wire formats a provider can stream in; `canonical` when it emits canonical events itself. */
export type UpstreamStreamFormat = 'chat-completions' | 'anthropic-messages';

export type LlmStream =
  | { kind: 'wire'; format: UpstreamStreamFormat; body: ReadableStream<Uint8Array>; warnings: TranslationWarning[] }
  | { kind: 'canonical'; events: ReadableStream<StreamEvent>; warnings: TranslationWarning[] };

export interface LlmAdapter {
  generate(call: LlmCall): Promise<{ response: CanonicalResponse; warnings: TranslationWarning[] }>;
  stream(call: LlmCall): Promise<LlmStream>;
}

/** A configured upstream: what it can do. Media and resources join in later adapters. */
export interface Provider {
  id: string;
  kind: string;
  llm?: LlmAdapter;
}

export type ProviderFactory = (config: ProviderConfig) => Provider;

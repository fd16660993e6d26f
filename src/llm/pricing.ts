import type { Pricing } from '../config/gateway-config.ts';
import type { CanonicalUsage } from '../../translators/canonical/index.ts';
import { roundUsd } from '../accounts/money.ts';

/** USD for a call's usage at the model's per-million-token prices. */
export function llmCost(pricing: Pricing | undefined, usage: CanonicalUsage): number {
  const input = (usage.inputTokens * (pricing?.input_per_mtok ?? 0)) / 1_000_000;
  const output = (usage.outputTokens * (pricing?.output_per_mtok ?? 0)) / 1_000_000;
  return roundUsd(input + output + (pricing?.per_request ?? 0));
}

/**
 * When a stream is cut short before the upstream reported usage, what was produced is still
 * charged: about four characters per token, the usual rule of thumb for English text.
 */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

import type { Pricing } from '../config/gateway-config.ts';
import type { CanonicalUsage } from '../../translators/canonical/index.ts';
import { roundUsd } from '../accounts/money.ts';

/**
 * USD for a call's usage at the model's per-million-token prices. `inputTokens` is the whole
 * input: the cache reads and writes in it are priced at `cache_read_per_mtok` and
 * `cache_write_per_mtok` (each `input_per_mtok` when unset; writes kept for an hour at
 * `cache_write_1h_per_mtok`, else as other writes), the rest at `input_per_mtok`; calls to an
 * upstream's built-in tools at `per_tool_call`.
 */
export function llmCost(pricing: Pricing | undefined, usage: CanonicalUsage): number {
  const inputPrice = pricing?.input_per_mtok ?? 0;
  const read = Math.max(0, usage.cachedInputTokens ?? 0);
  const written = Math.max(0, usage.cacheWriteTokens ?? 0);
  const writtenForAnHour = Math.min(written, Math.max(0, usage.cacheWrite1hTokens ?? 0));
  const uncached = Math.max(0, usage.inputTokens - read - written);
  const writePrice = pricing?.cache_write_per_mtok ?? inputPrice;
  const input =
    (uncached * inputPrice +
      read * (pricing?.cache_read_per_mtok ?? inputPrice) +
      (written - writtenForAnHour) * writePrice +
      writtenForAnHour * (pricing?.cache_write_1h_per_mtok ?? writePrice)) /
    1_000_000;
  // An upstream's negative count would be a credit, taken off the other calls settled beside it.
  const output = (Math.max(0, usage.outputTokens) * (pricing?.output_per_mtok ?? 0)) / 1_000_000;
  const usd = input + output + toolCallsCost(pricing, usage.builtInToolCalls) + (pricing?.per_request ?? 0);
  // Counts no upstream could mean (1e308 tokens) come to Infinity: charged as the most any
  // amount is, which the settlement caps at what the account can spend.
  return roundUsd(Number.isFinite(usd) ? usd : Number.MAX_VALUE);
}

/** The built-in tool calls at `per_tool_call`; a tool the model does not price costs nothing beyond tokens. */
function toolCallsCost(pricing: Pricing | undefined, calls: Record<string, number> | undefined): number {
  let usd = 0;
  for (const tool in calls) usd += Math.max(0, calls[tool] ?? 0) * (pricing?.per_tool_call?.[tool] ?? 0);
  return usd;
}

/** The highest price an input token can have (a cache write may cost more than plain input): what a hold assumes. */
export function worstInputPrice(pricing: Pricing | undefined): number {
  const input = pricing?.input_per_mtok ?? 0;
  const write = pricing?.cache_write_per_mtok ?? input;
  return Math.max(input, pricing?.cache_read_per_mtok ?? input, write, pricing?.cache_write_1h_per_mtok ?? write);
}

/**
 * When a stream is cut short before the upstream reported usage, what was produced is still
 * charged: about four characters per token, the usual rule of thumb for English text.
 */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

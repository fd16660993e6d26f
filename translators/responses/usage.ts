import type { CanonicalUsage } from '../canonical/usage.ts';
import type { ResponsesUsage } from './wire-types.ts';

/** Canonical usage → the Responses `usage` object (every detail field present, as the SDK types it). */
export function toResponsesUsage(usage: CanonicalUsage): ResponsesUsage {
  return {
    input_tokens: usage.inputTokens,
    input_tokens_details: { cached_tokens: usage.cachedInputTokens ?? 0, cache_write_tokens: 0 },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens ?? 0 },
    total_tokens: usage.totalTokens,
  };
}

const count = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);
const field = (value: unknown, key: string): unknown =>
  typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;

/** An upstream's Responses `usage` (possibly null or partial) → canonical usage. */
export function fromResponsesUsage(usage: unknown): CanonicalUsage {
  const inputTokens = count(field(usage, 'input_tokens')) ?? 0;
  const outputTokens = count(field(usage, 'output_tokens')) ?? 0;
  const result: CanonicalUsage = {
    inputTokens,
    outputTokens,
    totalTokens: count(field(usage, 'total_tokens')) ?? inputTokens + outputTokens,
  };
  const cached = count(field(field(usage, 'input_tokens_details'), 'cached_tokens'));
  if (cached !== undefined) result.cachedInputTokens = cached;
  const reasoning = count(field(field(usage, 'output_tokens_details'), 'reasoning_tokens'));
  if (reasoning !== undefined) result.reasoningTokens = reasoning;
  return result;
}

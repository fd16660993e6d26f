import type { CanonicalUsage } from '../canonical/usage.ts';
import { asNumber, asObject } from '../shared/validation.ts';
import type { ResponsesUsage } from './wire-types.ts';

/** Canonical usage → the Responses `usage` object (every detail field present, as the SDK types it). */
export function toResponsesUsage(usage: CanonicalUsage): ResponsesUsage {
  return {
    input_tokens: usage.inputTokens,
    input_tokens_details: {
      cached_tokens: usage.cachedInputTokens ?? 0,
      cache_write_tokens: usage.cacheWriteTokens ?? 0,
    },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens ?? 0 },
    total_tokens: usage.totalTokens,
  };
}

/** An upstream's Responses `usage` (possibly null or partial) → canonical usage. */
export function fromResponsesUsage(usage: unknown): CanonicalUsage {
  const u = asObject(usage) ?? {};
  const inputTokens = asNumber(u.input_tokens) ?? 0;
  const outputTokens = asNumber(u.output_tokens) ?? 0;
  const result: CanonicalUsage = {
    inputTokens,
    outputTokens,
    totalTokens: asNumber(u.total_tokens) ?? inputTokens + outputTokens,
  };
  const cached = asNumber(asObject(u.input_tokens_details)?.cached_tokens);
  if (cached !== undefined) result.cachedInputTokens = cached;
  const written = asNumber(asObject(u.input_tokens_details)?.cache_write_tokens);
  if (written) result.cacheWriteTokens = written;
  const reasoning = asNumber(asObject(u.output_tokens_details)?.reasoning_tokens);
  if (reasoning !== undefined) result.reasoningTokens = reasoning;
  return result;
}

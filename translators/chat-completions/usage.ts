import { emptyUsage, mergeUsage, type CanonicalUsage, type TokenFigure } from '../canonical/usage.ts';
import { asNumber, asObject } from '../common/validation.ts';
import type { ChatUsage } from './wire-types.ts';

/**
 * Chat `CompletionUsage` ↔ canonical usage. The two agree on meaning: `prompt_tokens` counts every
 * input token, cache hits included (`prompt_tokens_details.cached_tokens` says how many were
 * hits), and `completion_tokens` includes reasoning (`completion_tokens_details.reasoning_tokens`).
 */

/** The figures a wire `usage` object states (absent, null and non-numbers are left out). */
export function readChatUsage(usage: unknown): Partial<CanonicalUsage> {
  const u = asObject(usage) ?? {};
  const out: Partial<CanonicalUsage> = {};
  const set = (key: TokenFigure, value: number | undefined) => {
    if (value !== undefined) out[key] = value;
  };
  set('inputTokens', asNumber(u.prompt_tokens));
  set('outputTokens', asNumber(u.completion_tokens));
  set('totalTokens', asNumber(u.total_tokens));
  set('cachedInputTokens', asNumber(asObject(u.prompt_tokens_details)?.cached_tokens));
  set('reasoningTokens', asNumber(asObject(u.completion_tokens_details)?.reasoning_tokens));
  // xAI counts reasoning outside `completion_tokens` (its total is prompt + completion + reasoning,
  // as recorded in tests/fixtures/recorded/xai-text.sse); reasoning is output the model wrote and is billed as such.
  const { inputTokens, outputTokens, totalTokens, reasoningTokens } = out;
  if (
    inputTokens !== undefined &&
    outputTokens !== undefined &&
    reasoningTokens &&
    totalTokens === inputTokens + outputTokens + reasoningTokens
  )
    out.outputTokens = outputTokens + reasoningTokens;
  return out;
}

/** An upstream's `usage` (possibly null or partial) → canonical usage; a missing total is the sum. */
export function fromChatUsage(usage: unknown): CanonicalUsage {
  return mergeUsage(emptyUsage(), readChatUsage(usage));
}

/** Canonical usage → `CompletionUsage`; each details object only when its figure is known. */
export function toChatUsage(usage: CanonicalUsage): ChatUsage {
  const out: ChatUsage = {
    prompt_tokens: usage.inputTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: usage.totalTokens,
  };
  if (usage.cachedInputTokens !== undefined) out.prompt_tokens_details = { cached_tokens: usage.cachedInputTokens };
  if (usage.reasoningTokens !== undefined) out.completion_tokens_details = { reasoning_tokens: usage.reasoningTokens };
  return out;
}

import type { CanonicalUsage } from '../canonical/usage.ts';
import { asNumber, asObject } from '../common/validation.ts';
import type { AnthropicDeltaUsage, AnthropicUsage } from './wire-types.ts';

/**
 * Anthropic counts input in three parts: `input_tokens` (uncached), `cache_creation_input_tokens`
 * (written to the cache) and `cache_read_input_tokens` (served from it). Canonical usage, like
 * OpenAI's, counts every input token in `inputTokens` and the cache reads and writes again in
 * `cachedInputTokens` and `cacheWriteTokens` (docs/protocol-mapping.md, "Usage arithmetic").
 */
export interface AnthropicUsageParts {
  input?: number;
  cacheCreation?: number;
  /** Of `cacheCreation`, the tokens written for an hour (`cache_creation.ephemeral_1h_input_tokens`). */
  cacheCreation1h?: number;
  cacheRead?: number;
  output?: number;
  thinking?: number;
  /** `server_tool_use`: the upstream's own tool calls by tool (`web_search_requests` → `web_search`). */
  serverTools?: Record<string, number>;
}

/** A `server_tool_use` key; anything else there is not counted (nor stored as a record's key). */
const REQUESTS_KEY = /^([a-z][a-z0-9_]{0,63})_requests$/;

/** `server_tool_use` → calls by tool; undefined when it counts none. */
function serverToolCalls(value: unknown): Record<string, number> | undefined {
  const counts = asObject(value);
  let calls: Record<string, number> | undefined;
  for (const key in counts) {
    const tool = REQUESTS_KEY.exec(key)?.[1];
    const n = asNumber(counts[key]);
    if (!tool || n === undefined || n <= 0) continue;
    calls ??= {};
    calls[tool] = n;
  }
  return calls;
}

/** Reads the token figures of a wire `usage` object (Usage or MessageDeltaUsage); absent and null are undefined. */
export function readAnthropicUsage(usage: unknown): AnthropicUsageParts {
  const u = asObject(usage) ?? {};
  const parts: AnthropicUsageParts = {};
  const set = (key: Exclude<keyof AnthropicUsageParts, 'serverTools'>, value: number | undefined) => {
    if (value !== undefined) parts[key] = value;
  };
  set('input', asNumber(u.input_tokens));
  set('cacheCreation', asNumber(u.cache_creation_input_tokens));
  set('cacheCreation1h', asNumber(asObject(u.cache_creation)?.ephemeral_1h_input_tokens));
  set('cacheRead', asNumber(u.cache_read_input_tokens));
  set('output', asNumber(u.output_tokens));
  set('thinking', asNumber(asObject(u.output_tokens_details)?.thinking_tokens));
  const serverTools = serverToolCalls(u.server_tool_use);
  if (serverTools) parts.serverTools = serverTools;
  return parts;
}

/** Later figures win, field by field (Anthropic's `message_delta` usage is cumulative). */
export function mergeUsageParts(into: AnthropicUsageParts, update: AnthropicUsageParts): AnthropicUsageParts {
  const merged = { ...into };
  for (const key of Object.keys(update) as Array<keyof AnthropicUsageParts>) {
    if (update[key] !== undefined) Object.assign(merged, { [key]: update[key] });
  }
  return merged;
}

/** The input side only (what `message_start` knows). */
export function inputUsage(parts: AnthropicUsageParts): Partial<CanonicalUsage> {
  const out: Partial<CanonicalUsage> = {
    inputTokens: (parts.input ?? 0) + (parts.cacheCreation ?? 0) + (parts.cacheRead ?? 0),
  };
  if (parts.cacheRead) out.cachedInputTokens = parts.cacheRead;
  if (parts.cacheCreation) out.cacheWriteTokens = parts.cacheCreation;
  if (parts.cacheCreation && parts.cacheCreation1h)
    out.cacheWrite1hTokens = Math.min(parts.cacheCreation, parts.cacheCreation1h);
  return out;
}

/** Wire usage parts → canonical usage. */
export function toCanonicalUsage(parts: AnthropicUsageParts): CanonicalUsage {
  const inputTokens = (parts.input ?? 0) + (parts.cacheCreation ?? 0) + (parts.cacheRead ?? 0);
  const outputTokens = parts.output ?? 0;
  const usage: CanonicalUsage = { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens };
  if (parts.cacheRead) usage.cachedInputTokens = parts.cacheRead;
  if (parts.cacheCreation) usage.cacheWriteTokens = parts.cacheCreation;
  if (parts.cacheCreation && parts.cacheCreation1h)
    usage.cacheWrite1hTokens = Math.min(parts.cacheCreation, parts.cacheCreation1h);
  if (parts.thinking !== undefined) usage.reasoningTokens = parts.thinking;
  if (parts.serverTools) usage.builtInToolCalls = parts.serverTools;
  return usage;
}

/** An upstream's `usage` object (possibly partial or null) → canonical usage. */
export function fromAnthropicUsage(usage: unknown): CanonicalUsage {
  return toCanonicalUsage(readAnthropicUsage(usage));
}

/** Uncached input tokens: Anthropic's `input_tokens` excludes cache reads and writes. */
function uncachedInput(usage: Partial<CanonicalUsage>): number {
  return Math.max(0, (usage.inputTokens ?? 0) - (usage.cachedInputTokens ?? 0) - (usage.cacheWriteTokens ?? 0));
}

const thinkingDetails = (usage: Partial<CanonicalUsage>) =>
  usage.reasoningTokens !== undefined ? { thinking_tokens: usage.reasoningTokens } : null;

/** The input figures, split Anthropic's way: cache reads and writes apart. */
const inputFields = (usage: Partial<CanonicalUsage>) => ({
  input_tokens: uncachedInput(usage),
  cache_creation_input_tokens: usage.cacheWriteTokens ?? 0,
  cache_read_input_tokens: usage.cachedInputTokens ?? 0,
});

/** Canonical usage → a Message's `usage`, every field the SDK types as required present. */
export function toAnthropicUsage(usage: Partial<CanonicalUsage>, outputFallback = 0): AnthropicUsage {
  return {
    ...inputFields(usage),
    cache_creation: null,
    output_tokens: usage.outputTokens ?? outputFallback,
    output_tokens_details: thinkingDetails(usage),
    server_tool_use: null,
    service_tier: null,
    inference_geo: null,
    speed: null,
  };
}

/** Canonical usage → the final `message_delta` usage; it always repeats the real input figures. */
export function toAnthropicDeltaUsage(usage: CanonicalUsage): AnthropicDeltaUsage {
  return {
    ...inputFields(usage),
    output_tokens: usage.outputTokens,
    output_tokens_details: thinkingDetails(usage),
    server_tool_use: null,
  };
}

/**
 * Token usage, the same for every format. `inputTokens` is the whole input, cache reads and
 * writes included (OpenAI's arithmetic); Anthropic's three-part split is rebuilt from it
 * (docs/protocol-mapping.md, "Usage arithmetic").
 */
export interface CanonicalUsage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  /** Input tokens served from a prompt cache (part of `inputTokens`), when the upstream says. */
  cachedInputTokens?: number;
  /** Input tokens written to a prompt cache (part of `inputTokens`), when the upstream says. */
  cacheWriteTokens?: number;
  /**
   * Of `cacheWriteTokens`, those written to a cache kept for an hour (Anthropic's `ttl: "1h"`,
   * which costs more than its 5-minute cache), when the upstream says.
   */
  cacheWrite1hTokens?: number;
  /** Output tokens spent on hidden reasoning, when the upstream says. */
  reasoningTokens?: number;
  /**
   * Calls the upstream made to its own built-in tools, by tool (`web_search`, `code_interpreter`…),
   * when the answer shows any: some bill per call on top of tokens (`pricing.per_tool_call`).
   */
  builtInToolCalls?: Record<string, number>;
}

/** The token figures of a usage (every field but the tool-call counts). */
export type TokenFigure = Exclude<keyof CanonicalUsage, 'builtInToolCalls'>;

export const emptyUsage = (): CanonicalUsage => ({ inputTokens: 0, outputTokens: 0, totalTokens: 0 });

/** Merge a partial report into a running total: later non-undefined figures win. */
export function mergeUsage(into: CanonicalUsage, update: Partial<CanonicalUsage>): CanonicalUsage {
  const merged: CanonicalUsage = { ...into };
  for (const key of Object.keys(update) as TokenFigure[]) {
    const value = update[key];
    if (typeof value === 'number') merged[key] = value;
  }
  if (update.builtInToolCalls) merged.builtInToolCalls = update.builtInToolCalls;
  if (update.totalTokens === undefined) merged.totalTokens = merged.inputTokens + merged.outputTokens;
  return merged;
}

/** Adds one call of `tool` to `calls` (a running count of built-in tool calls). */
export function addToolCall(calls: Record<string, number>, tool: string): Record<string, number> {
  calls[tool] = (calls[tool] ?? 0) + 1;
  return calls;
}

/**
 * `usage` with each built-in tool's calls the most of what it states and what a stream showed
 * (`seen`): a stream counts calls as they finish, and neither count may go unbilled.
 */
export function withMostCalls(usage: CanonicalUsage, seen: Record<string, number>): CanonicalUsage {
  const stated = usage.builtInToolCalls ?? {};
  const tools = Object.keys(seen).filter((tool) => (seen[tool] ?? 0) > (stated[tool] ?? 0));
  if (!tools.length) return usage;
  const calls = { ...stated };
  for (const tool of tools) calls[tool] = seen[tool] ?? 0;
  return { ...usage, builtInToolCalls: calls };
}

import { addToolCall, type CanonicalUsage } from '../canonical/usage.ts';
import { asNumber, asObject } from '../common/validation.ts';
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

/** Output items of the client's own tools, not the upstream's: they cost nothing beyond tokens. */
const CLIENT_CALLS = new Set(['function_call', 'custom_tool_call']);
/** A call item's type; anything else an upstream writes there is not counted (nor stored as a key). */
const CALL_ITEM = /^[a-z][a-z0-9_]{0,63}_call$/;

/** The built-in tool an output item is a call to (`web_search` for a `web_search_call`), if it is one. */
export function builtInToolOf(item: unknown): string | undefined {
  const type = asObject(item)?.type;
  if (typeof type !== 'string' || !CALL_ITEM.test(type) || CLIENT_CALLS.has(type)) return undefined;
  return type.slice(0, -'_call'.length);
}

/**
 * The calls to built-in tools in a response's `output`, by tool: a `web_search_call` item is one
 * `web_search` call, a `code_interpreter_call` one `code_interpreter` call, and so on for any
 * `…_call` item but the client's own tools'. Undefined when there are none.
 */
export function builtInToolCalls(output: unknown): Record<string, number> | undefined {
  if (!Array.isArray(output)) return undefined;
  let calls: Record<string, number> | undefined;
  for (const item of output) {
    const tool = builtInToolOf(item);
    if (tool) calls = addToolCall(calls ?? {}, tool);
  }
  return calls;
}

/**
 * An upstream's Responses `usage` (possibly null or partial) → canonical usage, with the calls to
 * built-in tools its `output` shows.
 */
export function fromResponsesUsage(usage: unknown, output?: unknown): CanonicalUsage {
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
  const calls = builtInToolCalls(output);
  if (calls) result.builtInToolCalls = calls;
  return result;
}

import type { PerCallTools } from '../../translators/passthrough/index.ts';
import type { ModelConfig } from '../config/gateway-config.ts';

/**
 * Built-in tools an upstream bills per call (a passed-through Responses body's `web_search`,
 * `code_interpreter`…; translators/passthrough/responses-tool-fees.ts) are charged from the
 * model's `pricing.per_tool_call` for each call the answer shows (src/llm/pricing.ts). Admission
 * refuses a tool the model does not price, and holds the dearest priced tool for every call the
 * response may make (docs/money.md).
 */

/** The first tool of `perCall` the model sets no `per_tool_call` price for. */
export function unpricedTool(perCall: PerCallTools, model: ModelConfig): PerCallTools['tools'][number] | undefined {
  return perCall.tools.find((tool) => model.pricing?.per_tool_call?.[tool.name] === undefined);
}

/** USD held for the tool calls: `maxCalls` at the dearest price among the tools. */
export function toolCallsHoldUsd(perCall: PerCallTools | undefined, model: ModelConfig): number {
  if (!perCall) return 0;
  let dearest = 0;
  for (const tool of perCall.tools) dearest = Math.max(dearest, model.pricing?.per_tool_call?.[tool.name] ?? 0);
  return dearest * perCall.maxCalls;
}

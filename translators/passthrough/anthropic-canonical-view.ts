import { asObject, isSet, type Json } from '../common/validation.ts';

/** A tool the canonical request can carry: one the client declares itself (no `type`, or `custom`). */
export function isCustomTool(tool: unknown): boolean {
  const obj = asObject(tool);
  return !obj || !isSet(obj.type) || obj.type === 'custom';
}

/**
 * What the gateway reads of a Messages body it passes through: the same body without the tools
 * Anthropic defines (web search, web fetch, bash, the text editor…), which the canonical request
 * has no form for, and without a `tool_choice` naming one of them. The upstream gets the whole
 * body; which of those tools may go, and what they cost, is anthropic-tool-use.ts's business.
 * The body itself when it declares none.
 */
export function anthropicCanonicalView(body: Json): Json {
  if (!Array.isArray(body.tools) || body.tools.every(isCustomTool)) return body;
  const tools = body.tools.filter(isCustomTool);
  const view: Json = { ...body, tools };
  const choice = asObject(body.tool_choice);
  if (choice?.type === 'tool' && !tools.some((tool) => asObject(tool)?.name === choice.name)) delete view.tool_choice;
  return view;
}

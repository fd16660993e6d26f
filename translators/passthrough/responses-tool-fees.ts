import type { TranslationWarning } from '../canonical/warnings.ts';
import { asObject, type Json } from '../common/validation.ts';
import type { PerCallTools } from './uncounted-input.ts';

/** Tools the client runs: what they return comes in the client's next request, counted there. */
const CLIENT_RUN = new Set([
  'function',
  'custom',
  'computer_use_preview',
  'computer_use',
  'local_shell',
  'shell',
  'apply_patch',
]);

/**
 * Tool types that cost nothing beyond tokens: those the client runs, and MCP (the upstream calls
 * a server the client names). Every other built-in tool — `web_search`, `code_interpreter`,
 * `image_generation`, and any the gateway has not heard of — may bill per call, and is used only
 * on a model that prices it.
 * @see https://platform.openai.com/docs/pricing#built-in-tools
 */
const TOKENS_ONLY = new Set([...CLIENT_RUN, 'mcp']);

/**
 * Tools the upstream runs itself within the response (web search, MCP, code interpreter…): what
 * they read (pages, tool lists, outputs) goes into the conversation as input no byte count of the
 * request bounds. Counted as files are (uncounted-input.ts), once each.
 */
export function serverRunTools(body: Json): number {
  if (!Array.isArray(body.tools)) return 0;
  let count = 0;
  for (const tool of body.tools) {
    const type = asObject(tool)?.type;
    if (typeof type === 'string' && !CLIENT_RUN.has(type)) count++;
  }
  return count;
}

/**
 * When the client sets no `max_tool_calls`, the most built-in tool calls one response may make:
 * the hold must cover every call, so it needs a bound.
 */
export const DEFAULT_MAX_TOOL_CALLS = 16;
/** The most a client may ask for: a bound the hold can price (1e308 calls would be no bound at all). */
export const MAX_TOOL_CALLS = 1_000;

/** A tool type as `pricing.per_tool_call` names it: every web search version is `web_search`. */
const priceName = (type: string) => (type.startsWith('web_search') ? 'web_search' : type);

/**
 * The built-in tools of a Responses body that bill per call, and the bound on their calls: the
 * client's `max_tool_calls` up to `MAX_TOOL_CALLS`, else `DEFAULT_MAX_TOOL_CALLS` (or
 * `MAX_TOOL_CALLS` for a client that asked more), which is then set in the upstream body
 * (`value`), with a warning. Undefined when the body enables none.
 */
export function perCallTools(body: Json, value: Json, warnings: TranslationWarning[]): PerCallTools | undefined {
  if (!Array.isArray(body.tools)) return undefined;
  const tools: PerCallTools['tools'] = [];
  body.tools.forEach((tool, i) => {
    const type = asObject(tool)?.type;
    if (typeof type === 'string' && !TOKENS_ONLY.has(type)) tools.push({ name: priceName(type), at: `tools[${i}]` });
  });
  if (!tools.length) return undefined;
  const asked = body.max_tool_calls;
  if (typeof asked === 'number' && Number.isInteger(asked) && asked >= 0 && asked <= MAX_TOOL_CALLS)
    return { tools, maxCalls: asked };
  const bound = typeof asked === 'number' && asked > MAX_TOOL_CALLS ? MAX_TOOL_CALLS : DEFAULT_MAX_TOOL_CALLS;
  value.max_tool_calls = bound;
  warnings.push({
    type: 'changed-value',
    field: 'max_tool_calls',
    message: `max_tool_calls was set to ${bound}: built-in tools are charged per call, and the balance hold needs a bound of at most ${MAX_TOOL_CALLS}`,
  });
  return { tools, maxCalls: bound };
}

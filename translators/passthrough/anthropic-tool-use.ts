import type { TranslationWarning } from '../canonical/warnings.ts';
import { asObject, invalid, type Json } from '../common/validation.ts';
import { isCustomTool } from './anthropic-canonical-view.ts';
import { countLeftOut, type PerCallTools, type UncountedInput } from './uncounted-input.ts';
import { MAX_TOOL_CALLS } from './responses-tool-fees.ts';

/**
 * Anthropic-defined tools a client run through the gateway may declare, and what they cost:
 * - run by the client (bash, the text editor, computer use, memory) or fetched by Anthropic
 *   without a fee (web fetch): tokens only;
 * - web search: billed per search, so the model must price `per_tool_call.web_search` (checked
 *   with the plan, src/llm/tool-call-hold.ts), and the searches are bounded by the tool's own
 *   `max_uses`.
 * Any other (code execution, tool search, MCP toolsets, a tool Anthropic adds later) is refused:
 * its cost has no bound the gateway can hold.
 * @see https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/overview
 */
const TOKENS_ONLY = /^(bash|text_editor|computer|memory|web_fetch)_\d{8}$/;
const WEB_SEARCH = /^web_search_\d{8}$/;
/**
 * Tools Anthropic runs within the response: the pages they read go into the conversation as input
 * no byte count of the request bounds, so each is held as a file is (uncounted-input.ts).
 */
const SERVER_RUN = /^(web_search|web_fetch)_\d{8}$/;

/**
 * Input tokens held for each Anthropic-defined tool beyond its definition's bytes: Anthropic adds
 * a system prompt of its own for such tools (a few hundred tokens; computer use about 1,200 with
 * its definition).
 */
export const DEFINED_TOOL_TOKENS = 2_000;
/** Searches a web search tool may make when the client sets no `max_uses`. */
export const DEFAULT_MAX_USES = 16;

/** `tool`'s `max_uses` when it bounds the hold; otherwise the bound set on `tool` (its upstream copy), with a warning. */
function searchBound(tool: Json, at: string, warnings: TranslationWarning[]): number {
  const asked = tool.max_uses;
  if (typeof asked === 'number' && Number.isInteger(asked) && asked >= 1 && asked <= MAX_TOOL_CALLS) return asked;
  const bound = typeof asked === 'number' && asked > MAX_TOOL_CALLS ? MAX_TOOL_CALLS : DEFAULT_MAX_USES;
  tool.max_uses = bound;
  warnings.push({
    type: 'changed-value',
    field: `${at}.max_uses`,
    message: `max_uses was set to ${bound}: each search is charged, and the balance hold needs a bound of at most ${MAX_TOOL_CALLS}`,
  });
  return bound;
}

/**
 * The Anthropic-defined tools of `body`: each counted into `uncounted` (its bytes and
 * `DEFINED_TOOL_TOKENS`), the web searches into `uncounted.perCallTools`, any other refused.
 * Returns the tools to send (the client's own array, or a copy whose searches got a bound).
 */
export function anthropicToolUse(body: Json, uncounted: UncountedInput, warnings: TranslationWarning[]): unknown {
  const declared = body.tools;
  if (!Array.isArray(declared) || declared.every(isCustomTool)) return declared;
  const perCall: PerCallTools = { tools: [], maxCalls: 0 };
  const tools = declared.map((raw, i) => {
    if (isCustomTool(raw)) return raw;
    const tool = asObject(raw) as Json;
    const type = String(tool.type);
    const at = `tools[${i}]`;
    countLeftOut(uncounted, tool, 'text');
    uncounted.textTokens += DEFINED_TOOL_TOKENS;
    if (SERVER_RUN.test(type)) uncounted.files++;
    if (TOKENS_ONLY.test(type)) return raw;
    if (!WEB_SEARCH.test(type))
      invalid(
        `${at}.type`,
        `tool type '${type}' is not supported: custom tools, Anthropic's client tools (bash, text_editor, computer, memory), web_fetch and web_search are`,
      );
    const sent = { ...tool };
    perCall.tools.push({ name: 'web_search', at });
    perCall.maxCalls += searchBound(sent, at, warnings);
    return sent.max_uses === tool.max_uses ? raw : sent;
  });
  if (perCall.tools.length) uncounted.perCallTools = perCall;
  return tools.every((tool, i) => tool === declared[i]) ? declared : tools;
}

import type { CanonicalMessage } from '../canonical/request.ts';
import type { TranslationWarning } from '../canonical/warnings.ts';
import { DROPPED_BLOCKS, droppedOutsideAssistant } from '../anthropic-messages/content-blocks.ts';
import { RequestSchema } from '../anthropic-messages/request-schema.ts';
import { DROPPED_TOOL_FIELDS } from '../anthropic-messages/tools.ts';
import { ignoredSetting } from '../common/request-fields.ts';
import { asObject, isSet, type Json } from '../common/validation.ts';
import { anthropicToolUse } from './anthropic-tool-use.ts';
import { refuseAnthropicFile } from './upstream-files.ts';
import { countLeftOut, nothingUncounted, type PassthroughRequest, type UncountedInput } from './uncounted-input.ts';

/**
 * The top-level fields that reach the upstream as written: the decoder's own (`top_k` among
 * them) and a top-level `cache_control`. Any other is withheld with a warning, named or not:
 * `service_tier`, `speed` and `inference_geo` change what Anthropic charges (priority tier, fast
 * mode, a region's premium), which the catalog's price does not follow; `container`,
 * `workspace_id` and `user_profile_id` name things in the operator's upstream account;
 * `context_management` may compact the conversation in extra model passes that Anthropic bills
 * in `usage.iterations`, outside the usage the gateway charges from. A field Anthropic adds later
 * waits for the gateway to know what it costs.
 * @see https://docs.anthropic.com/en/api/messages
 */
const FORWARDED = new Set([...Object.keys(RequestSchema.entries), 'cache_control']);

/** A document is a file to the hold (its pages cost more than its bytes) unless it is plain text. */
const documentKind = (block: Json) => (asObject(block.source)?.type === 'text' ? 'text' : 'file');

/**
 * Counts into `uncounted` the blocks of `blocks` the decoder dropped (the canonical request lacks
 * them, and the upstream reads them), and refuses any naming an upstream file.
 */
function countBlocks(blocks: unknown[], at: string, role: unknown, uncounted: UncountedInput): void {
  blocks.forEach((raw, j) => {
    const block = asObject(raw);
    if (!block) return;
    const type = String(block.type);
    refuseAnthropicFile(block, `${at}[${j}]`);
    if (type === 'tool_result' && Array.isArray(block.content))
      countBlocks(block.content, `${at}[${j}].content`, 'user', uncounted);
    else if (role === 'assistant' ? DROPPED_BLOCKS.has(type) : droppedOutsideAssistant(type))
      countLeftOut(uncounted, block, type === 'document' ? documentKind(block) : 'text');
  });
}

/** Tool settings the canonical tool has no place for (`input_examples`…): sent, and counted. */
function countToolExtras(tools: unknown, uncounted: UncountedInput): void {
  if (!Array.isArray(tools)) return;
  for (const tool of tools) {
    const obj = asObject(tool);
    for (const field of DROPPED_TOOL_FIELDS) if (obj && isSet(obj[field])) countLeftOut(uncounted, obj[field], 'text');
  }
}

/**
 * A Messages client's body → the body for an Anthropic upstream: the client's own, so what the
 * canonical request has no form for reaches Anthropic as written — `document` (PDFs, with
 * citations) and `search_result` blocks, `top_k`, efforts above `high`, a top-level
 * `cache_control`, a tool's `input_examples` — where a translation drops or changes it with a
 * warning; Anthropic judges them, and its 4xx comes back as it is. The gateway still decodes and
 * validates what it reads of the body (anthropic-canonical-view.ts), and refuses what it refuses
 * (`mcp_servers`; Anthropic-defined tools but those anthropic-tool-use.ts allows), and here blocks
 * naming a file of the provider's Files API. Withheld, each with a warning: the top-level
 * fields `FORWARDED` lacks. What the canonical request lacks is measured for the hold (`uncounted`).
 * `model` stays the gateway's id here; the adapter swaps in its upstream model.
 */
export function anthropicPassthroughRequest(body: Json, _history: CanonicalMessage[]): PassthroughRequest {
  const warnings: TranslationWarning[] = [];
  const uncounted = nothingUncounted();
  if (Array.isArray(body.messages))
    body.messages.forEach((raw, i) => {
      const message = asObject(raw);
      if (Array.isArray(message?.content))
        countBlocks(message.content, `messages[${i}].content`, message.role, uncounted);
    });
  countToolExtras(body.tools, uncounted);
  const tools = anthropicToolUse(body, uncounted, warnings);
  let value = tools === body.tools ? body : { ...body, tools };
  for (const field of Object.keys(body)) {
    if (FORWARDED.has(field)) continue;
    if (value === body) value = { ...body };
    delete value[field];
    if (isSet(body[field])) warnings.push(ignoredSetting(field));
  }
  return { value, warnings, uncounted };
}

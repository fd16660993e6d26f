import type { CanonicalMessage } from '../canonical/request.ts';
import type { TranslationWarning } from '../canonical/warnings.ts';
import { DROPPED_BLOCKS, droppedOutsideAssistant } from '../anthropic-messages/content-blocks.ts';
import { RequestSchema } from '../anthropic-messages/request-schema.ts';
import { DROPPED_TOOL_FIELDS } from '../anthropic-messages/tools.ts';
import { ignoredSetting } from '../shared/request-fields.ts';
import { asObject, isSet, type Json } from '../shared/validation.ts';
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

/** What the walk over the client's blocks finds: its warnings and what the canonical request lacks. */
interface Walk {
  warnings: TranslationWarning[];
  uncounted: UncountedInput;
}

/** A block that names a file in the provider's Files API: the operator's upstream account, not the client's. */
function namesUpstreamFile(block: Json): boolean {
  return block.type === 'container_upload' || asObject(block.source)?.type === 'file';
}

/** A document is a file to the hold (its pages cost more than its bytes) unless it is plain text. */
const documentKind = (block: Json) => (asObject(block.source)?.type === 'text' ? 'text' : 'file');

/**
 * `blocks` without those naming an upstream file (each told), counting what the decoder dropped:
 * the canonical request lacks it, and the upstream reads it. The same array when nothing goes.
 */
function passBlocks(blocks: unknown[], at: string, role: unknown, walk: Walk): unknown[] {
  let kept: unknown[] | undefined;
  blocks.forEach((raw, j) => {
    const block = asObject(raw);
    const type = String(block?.type);
    if (block && namesUpstreamFile(block)) {
      kept ??= blocks.slice(0, j);
      walk.warnings.push({
        type: 'unsupported-content',
        field: `${at}[${j}]`,
        message: `${type} blocks naming a file of the provider's Files API are not sent: its files are the gateway's, not the client's`,
      });
      return;
    }
    kept?.push(raw);
    if (!block) return;
    if (type === 'tool_result' && Array.isArray(block.content)) {
      const content = passBlocks(block.content, `${at}[${j}].content`, 'user', walk);
      if (content !== block.content) {
        kept ??= blocks.slice(0, j + 1);
        kept[kept.length - 1] = { ...block, content };
      }
    } else if (role === 'assistant' ? DROPPED_BLOCKS.has(type) : droppedOutsideAssistant(type))
      countLeftOut(walk.uncounted, block, type === 'document' ? documentKind(block) : 'text');
  });
  return kept ?? blocks;
}

/** `messages` with each one's content passed (`passBlocks`); the same array when nothing changed. */
function passMessages(messages: unknown, walk: Walk): unknown {
  if (!Array.isArray(messages)) return messages;
  let changed = false;
  const out = messages.map((raw, i) => {
    const message = asObject(raw);
    if (!message || !Array.isArray(message.content)) return raw;
    const content = passBlocks(message.content, `messages[${i}].content`, message.role, walk);
    if (content === message.content) return raw;
    changed = true;
    return { ...message, content };
  });
  return changed ? out : messages;
}

/** Tool settings the canonical tool has no place for (`input_examples`…): sent, and counted. */
function countToolExtras(tools: unknown, walk: Walk): void {
  if (!Array.isArray(tools)) return;
  for (const tool of tools) {
    const obj = asObject(tool);
    for (const field of DROPPED_TOOL_FIELDS)
      if (obj && isSet(obj[field])) countLeftOut(walk.uncounted, obj[field], 'text');
  }
}

/**
 * A Messages client's body → the body for an Anthropic upstream: the client's own, so what the
 * canonical request has no form for reaches Anthropic as written — `document` (PDFs, with
 * citations) and `search_result` blocks, `top_k`, efforts above `high`, a top-level
 * `cache_control`, a tool's `input_examples` — where a translation drops or changes it with a
 * warning; Anthropic judges them, and its 4xx comes back as it is. The gateway still decodes and
 * validates the whole body, and refuses what it refuses (server tools, `mcp_servers`). Withheld,
 * each with a warning: the top-level fields `FORWARDED` lacks, and blocks naming a file of the
 * provider's Files API. What the canonical request lacks is measured for the hold (`uncounted`).
 * `model` stays the gateway's id here; the adapter swaps in its upstream model.
 */
export function anthropicPassthroughRequest(body: Json, _history: CanonicalMessage[]): PassthroughRequest {
  const walk: Walk = { warnings: [], uncounted: nothingUncounted() };
  let value = body;
  for (const field of Object.keys(body)) {
    if (FORWARDED.has(field)) continue;
    if (value === body) value = { ...body };
    delete value[field];
    if (isSet(body[field])) walk.warnings.push(ignoredSetting(field));
  }
  const messages = passMessages(body.messages, walk);
  if (messages !== body.messages) value = { ...value, messages };
  countToolExtras(body.tools, walk);
  return { value, warnings: walk.warnings, uncounted: walk.uncounted };
}

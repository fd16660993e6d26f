import { asObject, type Json } from '../common/validation.ts';
import { countLeftOut, type LeftOutKind, nothingUncounted, type UncountedInput } from './uncounted-input.ts';

/** Input items the canonical request has a form for (an item without `type` is a message or a reference). */
const ITEM_TYPES = new Set(['message', 'function_call', 'function_call_output', 'reasoning', 'item_reference']);
/** Content parts the canonical request has a form for. */
const PART_TYPES = new Set(['input_text', 'input_image', 'output_text', 'refusal']);

function readablePart(part: unknown): boolean {
  const obj = asObject(part);
  if (!obj) return true; // not an object: left for the decoder to refuse by name
  if (!PART_TYPES.has(String(obj.type))) return false;
  return obj.type !== 'input_image' || typeof obj.image_url === 'string';
}

const itemType = (obj: Json) => obj.type ?? (obj.role === undefined ? 'item_reference' : 'message');

function viewItem(item: unknown): unknown[] {
  const obj = asObject(item);
  if (!obj) return [item];
  const type = itemType(obj);
  if (!ITEM_TYPES.has(String(type))) return [];
  if (type === 'function_call_output' && Array.isArray(obj.output))
    return [{ ...obj, output: obj.output.filter(readablePart) }];
  if (type !== 'message' || !Array.isArray(obj.content)) return [item];
  const content = obj.content.filter(readablePart);
  return content.length ? [{ ...obj, content }] : [];
}

/**
 * What the gateway reads of a Responses body it passes through: the same body without what the
 * canonical request has no form for — built-in tools (`web_search`, `file_search`, `mcp`…) and
 * tool choices naming them, their call items, file and audio parts. The upstream gets the
 * whole body; this view only feeds the gateway's own needs (the balance hold, the records, the
 * stored conversation), so a Responses client may use every feature of a Responses upstream.
 * Everything the view keeps is still validated, naming the field, like any request. What it
 * leaves out is measured for the hold by `responsesLeftOut`, part for part.
 */
export function responsesCanonicalView(body: Json): Json {
  const view: Json = { ...body };
  if (Array.isArray(body.tools))
    view.tools = body.tools.filter((t) => asObject(t)?.type === 'function' || !asObject(t));
  const choice = asObject(body.tool_choice);
  if (choice && choice.type !== 'function') delete view.tool_choice;
  if (Array.isArray(body.input)) {
    const input = body.input.flatMap(viewItem);
    // Nothing readable left (say, a lone file): the view asks for an empty text instead of nothing.
    view.input = input.length ? input : '';
  }
  return view;
}

/** A file is held as a file; an image by `file_id` as an image; anything else by its bytes. */
function partKind(part: unknown): LeftOutKind {
  const type = asObject(part)?.type;
  return type === 'input_file' ? 'file' : type === 'input_image' ? 'image' : 'text';
}

/** A computer's screenshot (`computer_call_output`) is an image; any other item is held by its bytes. */
const itemKind = (obj: Json): LeftOutKind => (itemType(obj) === 'computer_call_output' ? 'image' : 'text');

/** Counts the parts of `parts` that `responsesCanonicalView` leaves out. */
function countParts(into: UncountedInput, parts: unknown[]): void {
  for (const part of parts) if (!readablePart(part)) countLeftOut(into, part, partKind(part));
}

/**
 * What `responsesCanonicalView` leaves out of `body` that the upstream still reads as input:
 * built-in tools and tool choices by their bytes, file parts as files, images by `file_id` as
 * images, other items and parts by their bytes.
 */
export function responsesLeftOut(body: Json): UncountedInput {
  const into = nothingUncounted();
  if (Array.isArray(body.tools))
    for (const tool of body.tools)
      if (asObject(tool)?.type !== 'function' && asObject(tool)) countLeftOut(into, tool, 'text');
  const choice = asObject(body.tool_choice);
  if (choice && choice.type !== 'function') countLeftOut(into, choice, 'text');
  if (!Array.isArray(body.input)) return into;
  for (const item of body.input) {
    const obj = asObject(item);
    if (!obj) continue;
    const type = itemType(obj);
    if (!ITEM_TYPES.has(String(type))) countLeftOut(into, obj, itemKind(obj));
    else if (type === 'function_call_output' && Array.isArray(obj.output)) countParts(into, obj.output);
    else if (type === 'message' && Array.isArray(obj.content)) countParts(into, obj.content);
  }
  return into;
}

import { asObject, type Json } from '../shared/validation.ts';

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

function viewItem(item: unknown): unknown[] {
  const obj = asObject(item);
  if (!obj) return [item];
  const type = obj.type ?? (obj.role === undefined ? 'item_reference' : 'message');
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
 * Everything the view keeps is still validated, naming the field, like any request.
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

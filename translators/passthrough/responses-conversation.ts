import { asObject, type Json } from '../common/validation.ts';

/**
 * Item types a stateless Responses upstream takes back as input: messages (with every content
 * part, files included), function and custom tool calls and their outputs. A built-in tool's
 * call item (`web_search_call`, …) names what only the upstream's own store could replay, and a
 * reasoning item's `encrypted_content` is readable only by the organisation that wrote it (the
 * next turn may go to another deployment, another organisation, which would refuse the call):
 * both are left out, as the canonical conversation leaves them out.
 */
const KEPT = new Set([
  'message',
  'function_call',
  'function_call_output',
  'custom_tool_call',
  'custom_tool_call_output',
]);

/**
 * A passed-through turn's conversation as the next turn sends it back to a Responses upstream:
 * the input it was sent (the earlier turns included) and the output it answered, ids removed (the
 * upstream stores nothing to look them up in), system and developer messages left out (the next
 * request's instructions lead, as on every path).
 */
export function responsesConversationItems(input: unknown, output: readonly unknown[]): Json[] {
  const sent = typeof input === 'string' ? [{ type: 'message', role: 'user', content: input }] : input;
  const items: Json[] = [];
  for (const item of [...(Array.isArray(sent) ? sent : []), ...output]) {
    const obj = asObject(item);
    if (!obj) continue;
    const type = obj.type ?? 'message';
    if (type === 'message' && (obj.role === 'system' || obj.role === 'developer')) continue;
    if (!KEPT.has(String(type))) continue;
    const { id: _id, status: _status, ...rest } = obj;
    items.push(rest);
  }
  return items;
}

/**
 * Largest conversation kept as the upstream saw it, as JSON text. Each stored turn holds the
 * whole conversation so far (as the canonical one does), so files sent again and again grow the
 * store with the square of a conversation's length: past this the turn keeps only the canonical
 * conversation, and the next one is encoded from it.
 */
export const MAX_WIRE_ITEMS_CHARS = 4 * 1024 * 1024;

import { asObject, isSet, type Json } from '../common/validation.ts';

/**
 * Item types a stateless Responses upstream takes back as input: messages (with every content
 * part, files included), function and custom tool calls and their outputs, and reasoning that
 * carries its `encrypted_content`. A built-in tool's call item (`web_search_call`, …) names what
 * only the upstream's own store could replay, so it is left out, as the canonical conversation
 * leaves it out.
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
    if (type === 'reasoning' ? !isSet(obj.encrypted_content) : !KEPT.has(String(type))) continue;
    const { id: _id, status: _status, ...rest } = obj;
    items.push(rest);
  }
  return items;
}

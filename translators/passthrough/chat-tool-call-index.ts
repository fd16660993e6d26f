import { parseJsonData } from '../shared/sse.ts';
import { asNumber, asObject, asString } from '../shared/validation.ts';

/**
 * Some OpenAI-compatible servers (Mistral among them) stream tool-call deltas without `index`,
 * which OpenAI always sends and the openai SDK's stream helper needs (it throws without it).
 * Passed-through chunks get the index filled in: a known call `id` keeps its index, a new id
 * takes the next one, and a delta with neither continues the last call.
 * @see https://platform.openai.com/docs/api-reference/chat-streaming/streaming
 */
export interface ToolCallIndexState {
  byId: Map<string, number>;
  last?: number;
  next: number;
}

export const createToolCallIndexState = (): ToolCallIndexState => ({ byId: new Map(), next: 0 });

/** The chunk's data with every tool call's `index` present; untouched (same text) when none was missing. */
export function fillToolCallIndices(data: string, state: ToolCallIndexState): string {
  if (!data.includes('"tool_calls"')) return data;
  const chunk = asObject(parseJsonData(data));
  const choices = Array.isArray(chunk?.choices) ? chunk.choices : [];
  let changed = false;
  for (const choice of choices) {
    const calls = asObject(asObject(choice)?.delta)?.tool_calls;
    if (!Array.isArray(calls)) continue;
    for (const raw of calls) {
      const call = asObject(raw);
      if (!call) continue;
      const id = asString(call.id) || undefined;
      let index = asNumber(call.index);
      if (index === undefined || !Number.isInteger(index)) {
        index = (id !== undefined ? state.byId.get(id) : state.last) ?? state.next;
        call.index = index;
        changed = true;
      }
      if (id !== undefined && !state.byId.has(id)) state.byId.set(id, index);
      state.last = index;
      state.next = Math.max(state.next, index + 1);
    }
  }
  return changed ? JSON.stringify(chunk) : data;
}

import { parseJsonData } from '../common/sse.ts';
import { asNumber, asObject, asString, type Json } from '../common/validation.ts';

/**
 * Some OpenAI-compatible servers stream chunks the openai SDK's stream helper
 * (`chat.completions.stream`) refuses, though OpenAI itself never sends them: tool-call deltas
 * without `index` (Mistral), a call's first delta without `type`, a first delta without `role`
 * (both seen in recorded traffic, tests/fixtures/recorded/). Passed-through chunks are repaired:
 * a known call `id` keeps its index, a new id takes the next one, a delta with neither continues
 * the last call; a call's first delta gets `type: 'function'`; the first delta gets
 * `role: 'assistant'`. A chunk that needs none of it is forwarded byte for byte.
 * @see https://platform.openai.com/docs/api-reference/chat-streaming/streaming
 */
export interface ChatChunkRepair {
  byId: Map<string, number>;
  /** Indices whose first delta went out. */
  seen: Set<number>;
  last?: number;
  next: number;
  roleSent: boolean;
}

export const createChatChunkRepair = (): ChatChunkRepair => ({
  byId: new Map(),
  seen: new Set(),
  next: 0,
  roleSent: false,
});

/** One tool-call delta; true when it was changed. */
function repairCall(call: Json, state: ChatChunkRepair): boolean {
  let changed = false;
  const id = asString(call.id) || undefined;
  let index = asNumber(call.index);
  if (index === undefined || !Number.isInteger(index)) {
    index = (id !== undefined ? state.byId.get(id) : state.last) ?? state.next;
    call.index = index;
    changed = true;
  }
  if (!state.seen.has(index)) {
    state.seen.add(index);
    if (call.type === undefined) {
      call.type = 'function';
      changed = true;
    }
  }
  if (id !== undefined && !state.byId.has(id)) state.byId.set(id, index);
  state.last = index;
  state.next = Math.max(state.next, index + 1);
  return changed;
}

/** Whether a chunk's choices carry tool-call deltas (after the first delta, the only ones the repair looks at). */
function hasToolCalls(choices: unknown): boolean {
  if (!Array.isArray(choices)) return false;
  for (const choice of choices) if (asObject(asObject(choice)?.delta)?.tool_calls !== undefined) return true;
  return false;
}

/**
 * The chunk's data, repaired where the SDK would refuse it; the same text when nothing was missing.
 * `parsed` is the chunk's parse as its reader made it, read (never changed) to tell cheaply whether
 * the chunk can need a repair at all; a chunk that does is parsed afresh and changed in the copy.
 */
export function repairChatChunk(data: string, parsed: Json | undefined, state: ChatChunkRepair): string {
  if (state.roleSent && !hasToolCalls(parsed?.choices)) return data;
  const chunk = asObject(parseJsonData(data));
  const choices = Array.isArray(chunk?.choices) ? chunk.choices : [];
  let changed = false;
  for (const raw of choices) {
    const choice = asObject(raw);
    const delta = asObject(choice?.delta);
    if (!delta || (asNumber(choice?.index) ?? 0) !== 0) continue;
    if (!state.roleSent) {
      state.roleSent = true;
      if (delta.role === undefined) {
        delta.role = 'assistant';
        changed = true;
      }
    }
    if (!Array.isArray(delta.tool_calls)) continue;
    for (const call of delta.tool_calls) {
      const obj = asObject(call);
      if (obj && repairCall(obj, state)) changed = true;
    }
  }
  return changed ? JSON.stringify(chunk) : data;
}

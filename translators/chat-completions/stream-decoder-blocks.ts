import { UpstreamStreamError } from '../canonical/errors.ts';
import type { StreamEvent } from '../canonical/stream.ts';
import { createCanonicalBlocks, type CanonicalBlock } from '../common/canonical-blocks.ts';
import { mintId } from '../common/ids.ts';
import { asNumber, asObject, asString, type Json } from '../common/validation.ts';

interface ToolCall {
  upstreamId?: string;
  id: string;
  name?: string;
  /** Set once the call has started (it needs its name first). */
  block?: CanonicalBlock;
  /** Argument text that arrived before the name, sent right after the start. */
  pending: string;
}

/**
 * Maps chat deltas onto canonical blocks numbered 0, 1, 2… in order of opening. Text opens on its
 * first non-empty piece and ends when the first tool call starts (text arriving after that opens a
 * new block); each upstream tool call gets its own block and stays open until the finish, so
 * parallel calls whose argument pieces interleave keep their own blocks. Real-world servers:
 * a call whose name comes in a later piece starts when it does (its arguments held until then);
 * a call without an id gets a minted `call_…`; calls without `index` are told apart by `id`; and a
 * known index arriving with a new id and a name (servers that number every call 0) is a new call.
 */
export function createBlockTracker() {
  const blocks = createCanonicalBlocks();
  let text: CanonicalBlock | undefined;
  /** Open reasoning (`reasoning_content`); it ends when text or a tool call begins. */
  let reasoning: CanonicalBlock | undefined;
  const endReasoning = (out: StreamEvent[]) => {
    if (reasoning) blocks.end(reasoning, out);
    reasoning = undefined;
  };
  const calls: ToolCall[] = [];
  const byIndex = new Map<number, ToolCall>();

  const find = (
    upstreamIndex: number | undefined,
    upstreamId: string | undefined,
    name: string | undefined,
  ): ToolCall | undefined => {
    if (upstreamIndex === undefined) return upstreamId ? calls.find((c) => c.upstreamId === upstreamId) : calls.at(-1);
    const call = byIndex.get(upstreamIndex);
    const reused = call && upstreamId && name && call.upstreamId && call.upstreamId !== upstreamId;
    return reused ? undefined : call;
  };

  const startCall = (call: ToolCall, name: string): StreamEvent[] => {
    const out: StreamEvent[] = [];
    if (text) blocks.end(text, out);
    text = undefined;
    endReasoning(out);
    call.block = blocks.startTool(out, call.id, name);
    blocks.delta(call.block, call.pending, out);
    call.pending = '';
    return out;
  };

  return {
    text(delta: string): StreamEvent[] {
      if (!delta) return [];
      const out: StreamEvent[] = [];
      endReasoning(out);
      text ??= blocks.startText(out);
      return blocks.delta(text, delta, out);
    },

    /** `reasoning_content` / `reasoning` text (DeepSeek, vLLM, OpenRouter); text arriving before it is ended first. */
    reasoning(delta: string): StreamEvent[] {
      if (!delta) return [];
      const out: StreamEvent[] = [];
      if (text) blocks.end(text, out);
      text = undefined;
      reasoning ??= blocks.startReasoning(out);
      return blocks.delta(reasoning, delta, out);
    },

    toolCall(raw: Json): StreamEvent[] {
      const upstreamIndex = asNumber(raw.index);
      const upstreamId = asString(raw.id) || undefined;
      const fn = asObject(raw.function);
      const name = asString(fn?.name) || undefined;
      const rawArgs = fn?.arguments;
      const args = typeof rawArgs === 'string' ? rawArgs : rawArgs == null ? '' : JSON.stringify(rawArgs);
      let call = find(upstreamIndex, upstreamId, name);
      if (!call) {
        call = { id: upstreamId ?? mintId('call_'), pending: '' };
        if (upstreamId) call.upstreamId = upstreamId;
        calls.push(call);
        if (upstreamIndex !== undefined) byIndex.set(upstreamIndex, call);
      }
      call.name ??= name;
      if (call.block) return blocks.delta(call.block, args);
      call.pending += args;
      return call.name ? startCall(call, call.name) : [];
    },

    /** Ends every open block in order of opening; a call that never got its name breaks the stream. */
    closeAll(): StreamEvent[] {
      const nameless = calls.find((c) => !c.block);
      if (nameless) throw new UpstreamStreamError(`tool call ${nameless.id} never received a function name`);
      text = undefined;
      reasoning = undefined;
      return blocks.endOpen();
    },
  };
}

import { UpstreamStreamError } from '../canonical/errors.ts';
import type { StreamEvent } from '../canonical/stream.ts';
import { createCanonicalBlocks, type CanonicalBlock } from '../common/canonical-blocks.ts';
import { asObject, asString, type Json } from '../common/validation.ts';

/**
 * Maps Responses output items (and a message's content parts) onto canonical blocks, numbered
 * 0, 1, 2, … in order of opening: a function call item is one tool block, each content part of
 * a message one text block. Text that only arrives in a `.done` event (nothing streamed) becomes
 * a whole block at once. Every method returns the canonical events to emit.
 * @see https://platform.openai.com/docs/api-reference/responses-streaming
 */
export function createBlockTracker() {
  const blocks = createCanonicalBlocks();
  /** Text blocks by output index, then content index. */
  const texts = new Map<number, Map<number, CanonicalBlock>>();
  /** Tool blocks by output index. */
  const tools = new Map<number, CanonicalBlock>();

  const addText = (outputIndex: number, contentIndex: number, out: StreamEvent[]): CanonicalBlock => {
    const block = blocks.startText(out);
    const parts = texts.get(outputIndex) ?? new Map<number, CanonicalBlock>();
    texts.set(outputIndex, parts.set(contentIndex, block));
    return block;
  };
  const wholeText = (outputIndex: number, contentIndex: number, text: string): StreamEvent[] => {
    if (!text) return [];
    const out: StreamEvent[] = [];
    const block = addText(outputIndex, contentIndex, out);
    return blocks.end(block, blocks.delta(block, text, out));
  };

  const tracker = {
    hasToolCalls: () => tools.size > 0,

    itemAdded(outputIndex: number, item: Json): StreamEvent[] {
      if (item.type !== 'function_call') return [];
      if (tools.has(outputIndex)) throw new UpstreamStreamError(`output item ${outputIndex} was added twice`);
      const callId = asString(item.call_id);
      const name = asString(item.name);
      if (!callId || !name) throw new UpstreamStreamError('a function_call item without call_id or name');
      const out: StreamEvent[] = [];
      const block = blocks.startTool(out, callId, name);
      tools.set(outputIndex, block);
      return blocks.delta(block, asString(item.arguments) ?? '', out);
    },

    textDelta(outputIndex: number, contentIndex: number, delta: string): StreamEvent[] {
      if (tools.has(outputIndex)) throw new UpstreamStreamError(`a text delta for function call item ${outputIndex}`);
      if (!delta) return [];
      const out: StreamEvent[] = [];
      let block = texts.get(outputIndex)?.get(contentIndex);
      if (!block) block = addText(outputIndex, contentIndex, out);
      else if (block.ended)
        throw new UpstreamStreamError(`a text delta after output ${outputIndex} part ${contentIndex} was done`);
      return blocks.delta(block, delta, out);
    },

    textDone(outputIndex: number, contentIndex: number, text: string): StreamEvent[] {
      const block = texts.get(outputIndex)?.get(contentIndex);
      return block ? blocks.end(block) : wholeText(outputIndex, contentIndex, text);
    },

    argumentsDelta(outputIndex: number, delta: string): StreamEvent[] {
      const block = tools.get(outputIndex);
      if (!block || block.ended)
        throw new UpstreamStreamError(
          `an arguments delta for output item ${outputIndex}, which is not an open function call`,
        );
      return blocks.delta(block, delta);
    },

    /** The final arguments count only when no delta carried them. */
    argumentsDone(outputIndex: number, args: string): StreamEvent[] {
      const block = tools.get(outputIndex);
      if (!block)
        throw new UpstreamStreamError(`arguments done for output item ${outputIndex}, which is not a function call`);
      if (block.ended) return [];
      return blocks.end(block, block.streamed ? [] : blocks.delta(block, args));
    },

    itemDone(outputIndex: number, item: Json): StreamEvent[] {
      if (item.type === 'function_call') {
        const added = tools.has(outputIndex) ? [] : tracker.itemAdded(outputIndex, item);
        return [...added, ...tracker.argumentsDone(outputIndex, asString(item.arguments) ?? '')];
      }
      if (item.type !== 'message') return [];
      const parts = texts.get(outputIndex);
      if (parts) {
        const out: StreamEvent[] = [];
        for (const block of parts.values()) blocks.end(block, out);
        return out;
      }
      // Nothing was streamed for this message: take its text from the finished item.
      const content = Array.isArray(item.content) ? item.content : [];
      return content.flatMap((part, i) => {
        const p = asObject(part);
        return wholeText(outputIndex, i, asString(p?.type === 'refusal' ? p.refusal : p?.text) ?? '');
      });
    },

    /** Ends whatever is still open, in block order (the terminal event came first). */
    closeAll: () => blocks.endOpen(),
  };
  return tracker;
}

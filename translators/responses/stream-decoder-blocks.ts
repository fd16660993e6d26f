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
  /** Reasoning blocks by output index, with the summary or content part their last delta was of. */
  const thoughts = new Map<number, { block: CanonicalBlock; part: string }>();

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

    /**
     * Reasoning text (`reasoning_text` content or a `summary_text` part) of a reasoning item: one
     * reasoning block per item, its parts a blank line apart. OpenAI's reasoning carries no
     * signature a client could send back; the block has none.
     */
    reasoningDelta(outputIndex: number, part: string, delta: string): StreamEvent[] {
      if (tools.has(outputIndex) || texts.has(outputIndex))
        throw new UpstreamStreamError(`a reasoning delta for output item ${outputIndex}, which is not reasoning`);
      if (!delta) return [];
      const out: StreamEvent[] = [];
      let thought = thoughts.get(outputIndex);
      if (!thought) {
        thought = { block: blocks.startReasoning(out), part };
        thoughts.set(outputIndex, thought);
      } else if (thought.block.ended)
        throw new UpstreamStreamError(`a reasoning delta after output item ${outputIndex} was done`);
      else if (thought.part !== part) {
        thought.part = part;
        blocks.delta(thought.block, '\n\n', out);
      }
      return blocks.delta(thought.block, delta, out);
    },

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
      if (item.type === 'reasoning') {
        const thought = thoughts.get(outputIndex);
        if (thought) return blocks.end(thought.block);
        // Nothing was streamed: the finished item's text, as a whole block.
        const text = reasoningTextOf(item);
        if (!text) return [];
        const out: StreamEvent[] = [];
        const block = blocks.startReasoning(out);
        thoughts.set(outputIndex, { block, part: '' });
        return blocks.end(block, blocks.delta(block, text, out));
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

/** A reasoning item's visible text: its `reasoning_text` content, else its summary parts, a blank line apart. */
export function reasoningTextOf(item: Json): string {
  const texts = (parts: unknown) =>
    (Array.isArray(parts) ? parts : [])
      .map((part) => asString(asObject(part)?.text) ?? '')
      .filter(Boolean)
      .join('\n\n');
  return texts(item.content) || texts(item.summary);
}

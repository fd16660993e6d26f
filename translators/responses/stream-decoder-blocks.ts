import { UpstreamStreamError } from '../canonical/errors.ts';
import type { StreamEvent } from '../canonical/stream.ts';
import { asObject, asString, type Json } from './json-access.ts';

interface Block {
  index: number;
  kind: 'text' | 'tool';
  /** Output item index, and content index for text. */
  outputIndex: number;
  streamed: boolean;
  ended: boolean;
}

/**
 * Maps Responses output items (and a message's content parts) onto canonical blocks, numbered
 * 0, 1, 2, … in order of opening. Every method returns the canonical events to emit.
 */
export function createBlockTracker() {
  let next = 0;
  const texts = new Map<string, Block>();
  const tools = new Map<number, Block>();
  const all: Block[] = [];

  const open = (kind: Block['kind'], outputIndex: number): Block => {
    const block: Block = { index: next++, kind, outputIndex, streamed: false, ended: false };
    all.push(block);
    return block;
  };
  const end = (block: Block): StreamEvent => {
    block.ended = true;
    return block.kind === 'text' ? { type: 'text-end', index: block.index } : { type: 'tool-call-end', index: block.index };
  };
  const wholeText = (outputIndex: number, contentIndex: number, text: string): StreamEvent[] => {
    if (!text) return [];
    const block = open('text', outputIndex);
    texts.set(`${outputIndex}:${contentIndex}`, block);
    return [{ type: 'text-start', index: block.index }, { type: 'text-delta', index: block.index, delta: text }, end(block)];
  };

  const tracker = {
    hasToolCalls: () => tools.size > 0,

    itemAdded(outputIndex: number, item: Json): StreamEvent[] {
      if (item.type !== 'function_call') return [];
      if (tools.has(outputIndex)) throw new UpstreamStreamError(`output item ${outputIndex} was added twice`);
      const callId = asString(item.call_id);
      const name = asString(item.name);
      if (!callId || !name) throw new UpstreamStreamError('a function_call item without call_id or name');
      const block = open('tool', outputIndex);
      tools.set(outputIndex, block);
      const out: StreamEvent[] = [{ type: 'tool-call-start', index: block.index, id: callId, name }];
      const args = asString(item.arguments);
      if (args) {
        block.streamed = true;
        out.push({ type: 'tool-call-delta', index: block.index, delta: args });
      }
      return out;
    },

    textDelta(outputIndex: number, contentIndex: number, delta: string): StreamEvent[] {
      if (tools.has(outputIndex)) throw new UpstreamStreamError(`a text delta for function call item ${outputIndex}`);
      if (!delta) return [];
      const key = `${outputIndex}:${contentIndex}`;
      let block = texts.get(key);
      const out: StreamEvent[] = [];
      if (!block) {
        block = open('text', outputIndex);
        texts.set(key, block);
        out.push({ type: 'text-start', index: block.index });
      }
      if (block.ended) throw new UpstreamStreamError(`a text delta after output ${outputIndex} part ${contentIndex} was done`);
      block.streamed = true;
      out.push({ type: 'text-delta', index: block.index, delta });
      return out;
    },

    textDone(outputIndex: number, contentIndex: number, text: string): StreamEvent[] {
      const block = texts.get(`${outputIndex}:${contentIndex}`);
      if (!block) return wholeText(outputIndex, contentIndex, text);
      return block.ended ? [] : [end(block)];
    },

    argumentsDelta(outputIndex: number, delta: string): StreamEvent[] {
      const block = tools.get(outputIndex);
      if (!block || block.ended) throw new UpstreamStreamError(`an arguments delta for output item ${outputIndex}, which is not an open function call`);
      if (!delta) return [];
      block.streamed = true;
      return [{ type: 'tool-call-delta', index: block.index, delta }];
    },

    argumentsDone(outputIndex: number, args: string): StreamEvent[] {
      const block = tools.get(outputIndex);
      if (!block) throw new UpstreamStreamError(`arguments done for output item ${outputIndex}, which is not a function call`);
      if (block.ended) return [];
      const out: StreamEvent[] = [];
      if (!block.streamed && args) out.push({ type: 'tool-call-delta', index: block.index, delta: args });
      block.streamed = true;
      out.push(end(block));
      return out;
    },

    itemDone(outputIndex: number, item: Json): StreamEvent[] {
      if (item.type === 'function_call') {
        const added = tools.has(outputIndex) ? [] : tracker.itemAdded(outputIndex, item);
        return [...added, ...tracker.argumentsDone(outputIndex, asString(item.arguments) ?? '')];
      }
      if (item.type !== 'message') return [];
      const mine = all.filter((b) => b.kind === 'text' && b.outputIndex === outputIndex);
      if (mine.length) return mine.filter((b) => !b.ended).map(end);
      // Nothing was streamed for this message: take its text from the finished item.
      const content = Array.isArray(item.content) ? item.content : [];
      return content.flatMap((part, i) => {
        const p = asObject(part);
        return wholeText(outputIndex, i, asString(p?.type === 'refusal' ? p.refusal : p?.text) ?? '');
      });
    },

    /** Ends whatever is still open, in block order (the terminal event came first). */
    closeAll(): StreamEvent[] {
      return all.filter((b) => !b.ended).map(end);
    },
  };
  return tracker;
}

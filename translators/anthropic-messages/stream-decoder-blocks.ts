import { UpstreamStreamError } from '../canonical/errors.ts';
import type { StreamEvent } from '../canonical/stream.ts';
import { asObject, asString, type Json } from '../shared/validation.ts';

type Tracked = { kind: 'text' | 'tool'; index: number; open: boolean } | { kind: 'skipped' };

export interface BlockTracker {
  start(upstreamIndex: number, block: Json): StreamEvent[];
  delta(upstreamIndex: number, delta: Json): StreamEvent[];
  stop(upstreamIndex: number): StreamEvent[];
  /** Ends blocks the upstream left open (only at a proper `message_stop`). */
  closeAll(): StreamEvent[];
}

const endEvent = (block: { kind: 'text' | 'tool'; index: number }): StreamEvent =>
  block.kind === 'text' ? { type: 'text-end', index: block.index } : { type: 'tool-call-end', index: block.index };

/**
 * Maps Anthropic content blocks (by their upstream `index`) to canonical blocks. Text and
 * tool_use blocks get canonical indices 0, 1, 2… in order of opening; thinking, redacted
 * thinking, server-tool and any other block types are skipped entirely, without using up a
 * canonical index.
 */
export function createBlockTracker(): BlockTracker {
  const blocks = new Map<number, Tracked>();
  let next = 0;

  const known = (upstreamIndex: number, what: string): Tracked => {
    const block = blocks.get(upstreamIndex);
    if (!block) throw new UpstreamStreamError(`${what} for content block ${upstreamIndex}, which was never started`);
    return block;
  };

  return {
    start(upstreamIndex, block) {
      if (blocks.has(upstreamIndex)) throw new UpstreamStreamError(`content block ${upstreamIndex} started twice`);
      if (block.type === 'text') {
        const index = next++;
        blocks.set(upstreamIndex, { kind: 'text', index, open: true });
        const initial = asString(block.text) ?? '';
        return initial ? [{ type: 'text-start', index }, { type: 'text-delta', index, delta: initial }] : [{ type: 'text-start', index }];
      }
      if (block.type === 'tool_use') {
        const id = asString(block.id);
        const name = asString(block.name);
        if (!id || !name) throw new UpstreamStreamError(`tool_use block ${upstreamIndex} without an id or name`);
        const index = next++;
        blocks.set(upstreamIndex, { kind: 'tool', index, open: true });
        const input = asObject(block.input);
        // Anthropic streams the input through input_json_delta and starts with `{}`; a proxy that
        // sends the whole input up front is honoured.
        const initial = input && Object.keys(input).length ? JSON.stringify(input) : '';
        const events: StreamEvent[] = [{ type: 'tool-call-start', index, id, name }];
        if (initial) events.push({ type: 'tool-call-delta', index, delta: initial });
        return events;
      }
      blocks.set(upstreamIndex, { kind: 'skipped' });
      return [];
    },

    delta(upstreamIndex, delta) {
      const block = known(upstreamIndex, 'content_block_delta');
      if (block.kind === 'skipped') return [];
      if (!block.open) throw new UpstreamStreamError(`content_block_delta for content block ${upstreamIndex} after its content_block_stop`);
      if (block.kind === 'text' && delta.type === 'text_delta') {
        const text = asString(delta.text) ?? '';
        return text ? [{ type: 'text-delta', index: block.index, delta: text }] : [];
      }
      if (block.kind === 'tool' && delta.type === 'input_json_delta') {
        const json = asString(delta.partial_json) ?? '';
        return json ? [{ type: 'tool-call-delta', index: block.index, delta: json }] : [];
      }
      // citations_delta, signature_delta and future delta types carry nothing canonical.
      return [];
    },

    stop(upstreamIndex) {
      const block = known(upstreamIndex, 'content_block_stop');
      if (block.kind === 'skipped') return [];
      if (!block.open) throw new UpstreamStreamError(`content block ${upstreamIndex} stopped twice`);
      block.open = false;
      return [endEvent(block)];
    },

    closeAll() {
      const events: StreamEvent[] = [];
      for (const block of blocks.values()) {
        if (block.kind !== 'skipped' && block.open) {
          block.open = false;
          events.push(endEvent(block));
        }
      }
      return events;
    },
  };
}

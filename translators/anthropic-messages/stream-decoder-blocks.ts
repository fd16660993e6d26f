import { UpstreamStreamError } from '../canonical/errors.ts';
import type { StreamEvent } from '../canonical/stream.ts';
import { createCanonicalBlocks, type CanonicalBlock } from '../common/canonical-blocks.ts';
import { asObject, asString, type Json } from '../common/validation.ts';

export interface BlockTracker {
  start(upstreamIndex: number, block: Json): StreamEvent[];
  delta(upstreamIndex: number, delta: Json): StreamEvent[];
  stop(upstreamIndex: number): StreamEvent[];
  /** Ends blocks the upstream left open (only at a proper `message_stop`). */
  closeAll(): StreamEvent[];
}

/**
 * Maps Anthropic content blocks (by their upstream `index`) to canonical blocks. Text, tool_use,
 * thinking and redacted_thinking blocks get canonical indices 0, 1, 2… in order of opening (a
 * thinking block's signature_delta is kept for its end); server-tool and any other block types
 * are skipped entirely, without using up a canonical index. A block started twice, or a delta or stop for a block that was never started
 * or has stopped, breaks the stream.
 * @see https://docs.anthropic.com/en/docs/build-with-claude/streaming
 */
export function createBlockTracker(): BlockTracker {
  const blocks = createCanonicalBlocks();
  const byUpstream = new Map<number, CanonicalBlock | 'skipped'>();
  /** Signatures of thinking blocks, by upstream index, until their stop. */
  const signatures = new Map<number, string>();

  const known = (upstreamIndex: number, what: string): CanonicalBlock | 'skipped' => {
    const block = byUpstream.get(upstreamIndex);
    if (!block) throw new UpstreamStreamError(`${what} for content block ${upstreamIndex}, which was never started`);
    return block;
  };

  return {
    start(upstreamIndex, block) {
      if (byUpstream.has(upstreamIndex)) throw new UpstreamStreamError(`content block ${upstreamIndex} started twice`);
      const out: StreamEvent[] = [];
      if (block.type === 'text') {
        const text = blocks.startText(out);
        byUpstream.set(upstreamIndex, text);
        return blocks.delta(text, asString(block.text) ?? '', out);
      }
      if (block.type === 'tool_use') {
        const id = asString(block.id);
        const name = asString(block.name);
        if (!id || !name) throw new UpstreamStreamError(`tool_use block ${upstreamIndex} without an id or name`);
        const tool = blocks.startTool(out, id, name);
        byUpstream.set(upstreamIndex, tool);
        // Anthropic streams the input through input_json_delta and starts with `{}`; a proxy that
        // sends the whole input up front is honoured.
        const input = asObject(block.input);
        return blocks.delta(tool, input && Object.keys(input).length ? JSON.stringify(input) : '', out);
      }
      if (block.type === 'thinking') {
        const thinking = blocks.startReasoning(out);
        byUpstream.set(upstreamIndex, thinking);
        const signature = asString(block.signature);
        if (signature) signatures.set(upstreamIndex, signature);
        return blocks.delta(thinking, asString(block.thinking) ?? '', out);
      }
      if (block.type === 'redacted_thinking') {
        byUpstream.set(upstreamIndex, blocks.startReasoning(out, asString(block.data) ?? ''));
        return out;
      }
      byUpstream.set(upstreamIndex, 'skipped');
      return out;
    },

    delta(upstreamIndex, delta) {
      const block = known(upstreamIndex, 'content_block_delta');
      if (block === 'skipped') return [];
      if (block.ended)
        throw new UpstreamStreamError(
          `content_block_delta for content block ${upstreamIndex} after its content_block_stop`,
        );
      if (block.kind === 'text' && delta.type === 'text_delta') return blocks.delta(block, asString(delta.text) ?? '');
      if (block.kind === 'tool' && delta.type === 'input_json_delta')
        return blocks.delta(block, asString(delta.partial_json) ?? '');
      if (block.kind === 'reasoning' && delta.type === 'thinking_delta')
        return blocks.delta(block, asString(delta.thinking) ?? '');
      if (block.kind === 'reasoning' && delta.type === 'signature_delta') {
        signatures.set(upstreamIndex, (signatures.get(upstreamIndex) ?? '') + (asString(delta.signature) ?? ''));
        return [];
      }
      // citations_delta and future delta types carry nothing canonical.
      return [];
    },

    stop(upstreamIndex) {
      const block = known(upstreamIndex, 'content_block_stop');
      if (block === 'skipped') return [];
      if (block.ended) throw new UpstreamStreamError(`content block ${upstreamIndex} stopped twice`);
      return blocks.end(block, [], signatures.get(upstreamIndex));
    },

    closeAll: () => blocks.endOpen(),
  };
}

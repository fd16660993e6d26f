import type { StreamEvent } from '../canonical/stream.ts';

/** One block of a canonical stream, as an upstream decoder tracks it. */
export interface CanonicalBlock {
  readonly kind: 'text' | 'tool' | 'reasoning';
  /** The block's ordinal in the message: 0, 1, 2… in order of opening. */
  readonly index: number;
  /** At least one delta went out. */
  streamed: boolean;
  ended: boolean;
}

export interface CanonicalBlocks {
  startText(out: StreamEvent[]): CanonicalBlock;
  startTool(out: StreamEvent[], id: string, name: string): CanonicalBlock;
  startReasoning(out: StreamEvent[], redacted?: string): CanonicalBlock;
  /** A delta for the block; an empty one emits nothing. */
  delta(block: CanonicalBlock, delta: string, out?: StreamEvent[]): StreamEvent[];
  /**
   * The block's end, unless it has ended already. A tool call whose arguments never came gets
   * `{}` first (JSON, as the non-streamed paths give), so no client sees `arguments: ""`.
   */
  end(block: CanonicalBlock, out?: StreamEvent[], signature?: string): StreamEvent[];
  /** Ends every block still open, in order of opening. */
  endOpen(out?: StreamEvent[]): StreamEvent[];
}

/**
 * The canonical side of every upstream decoder's block tracking, which the three wire formats
 * share: blocks numbered in order of opening, a start, non-empty deltas and one end each, and
 * whatever is still open ended in order when the message stops. Each method appends what it
 * emits to `out` and returns it. How an upstream event finds its block is each format's own
 * (its `stream-decoder-blocks.ts`): chat infers calls from loosely keyed deltas, Anthropic names
 * blocks by index with explicit starts and stops, Responses by output item and content part.
 */
export function createCanonicalBlocks(): CanonicalBlocks {
  const blocks: CanonicalBlock[] = [];
  const open = (kind: CanonicalBlock['kind']): CanonicalBlock => {
    const block: CanonicalBlock = { kind, index: blocks.length, streamed: false, ended: false };
    blocks.push(block);
    return block;
  };
  const end = (block: CanonicalBlock, out: StreamEvent[] = [], signature?: string): StreamEvent[] => {
    if (block.ended) return out;
    block.ended = true;
    switch (block.kind) {
      case 'text':
        out.push({ type: 'text-end', index: block.index });
        break;
      case 'tool':
        if (!block.streamed) out.push({ type: 'tool-call-delta', index: block.index, delta: '{}' });
        out.push({ type: 'tool-call-end', index: block.index });
        break;
      case 'reasoning':
        out.push(
          signature === undefined
            ? { type: 'reasoning-end', index: block.index }
            : { type: 'reasoning-end', index: block.index, signature },
        );
        break;
      default: {
        const exhaustive: never = block.kind;
        throw new Error(`unknown block kind ${String(exhaustive)}`);
      }
    }
    return out;
  };
  return {
    startText(out) {
      const block = open('text');
      out.push({ type: 'text-start', index: block.index });
      return block;
    },
    startTool(out, id, name) {
      const block = open('tool');
      out.push({ type: 'tool-call-start', index: block.index, id, name });
      return block;
    },
    startReasoning(out, redacted) {
      const block = open('reasoning');
      out.push(
        redacted === undefined
          ? { type: 'reasoning-start', index: block.index }
          : { type: 'reasoning-start', index: block.index, redacted },
      );
      return block;
    },
    delta(block, delta, out = []) {
      if (!delta) return out;
      block.streamed = true;
      const type = block.kind === 'text' ? 'text-delta' : block.kind === 'tool' ? 'tool-call-delta' : 'reasoning-delta';
      out.push({ type, index: block.index, delta });
      return out;
    },
    end,
    endOpen(out = []) {
      for (const block of blocks) end(block, out);
      return out;
    },
  };
}

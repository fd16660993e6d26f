import { formatSse } from '../common/sse.ts';

/** `thinking` streams thinking_delta and ends with its signature; `redacted` carries its data in the start. */
export type QueuedKind = 'text' | 'tool' | 'thinking' | 'redacted';

interface QueuedBlock {
  kind: QueuedKind;
  id: string;
  name: string;
  /** Deltas that arrived while another block was open. */
  pending: string[];
  /** A thinking block's signature, sent as a signature_delta just before its stop. */
  signature?: string;
  ended: boolean;
}

export interface BlockQueue {
  /** `id` is a tool call's id, or a redacted block's data; `name` a tool call's name. */
  start(canonicalIndex: number, kind: QueuedKind, id?: string, name?: string): string[];
  delta(canonicalIndex: number, delta: string): string[];
  end(canonicalIndex: number, signature?: string): string[];
  /** Writes out every block still queued (start, buffered deltas, stop), in order. */
  drain(): string[];
}

/**
 * Serialises canonical blocks for Anthropic, whose blocks are strictly sequential: one open at a
 * time, indices 0, 1, 2… in order of emission. Canonical blocks may interleave (parallel tool
 * calls); the block at the head of the queue streams live, the others buffer their deltas until
 * every block before them has stopped, then are written out in order.
 */
export function createBlockQueue(): BlockQueue {
  const queue: QueuedBlock[] = [];
  const byCanonical = new Map<number, QueuedBlock>();
  let nextIndex = 0;
  /** The Anthropic index of the head block once its content_block_start is out. */
  let headIndex: number | undefined;

  const contentBlock = (block: QueuedBlock) => {
    switch (block.kind) {
      case 'text':
        return { type: 'text', text: '' };
      case 'tool':
        // As the non-streamed answer has it (the SDK's ToolUseBlock requires `caller`).
        return { type: 'tool_use', id: block.id, name: block.name, input: {}, caller: { type: 'direct' } };
      case 'thinking':
        return { type: 'thinking', thinking: '', signature: '' };
      case 'redacted':
        return { type: 'redacted_thinking', data: block.id };
      default: {
        const exhaustive: never = block.kind;
        throw new Error(`unknown block kind ${String(exhaustive)}`);
      }
    }
  };
  const startEvent = (block: QueuedBlock, index: number): string =>
    formatSse({ type: 'content_block_start', index, content_block: contentBlock(block) }, 'content_block_start');
  const deltaOf = (block: QueuedBlock, delta: string) => {
    if (block.kind === 'text') return { type: 'text_delta', text: delta };
    if (block.kind === 'tool') return { type: 'input_json_delta', partial_json: delta };
    return { type: 'thinking_delta', thinking: delta };
  };
  const deltaEvent = (block: QueuedBlock, index: number, delta: string): string =>
    formatSse({ type: 'content_block_delta', index, delta: deltaOf(block, delta) }, 'content_block_delta');
  const signatureEvent = (index: number, signature: string): string =>
    formatSse(
      { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature } },
      'content_block_delta',
    );
  const stopEvent = (index: number): string => formatSse({ type: 'content_block_stop', index }, 'content_block_stop');

  /** Opens the head block if needed; closes and removes finished heads; stops at a live one (or at `all`, closes it too). */
  const advance = (all: boolean): string[] => {
    const out: string[] = [];
    for (let head = queue[0]; head; head = queue[0]) {
      if (headIndex === undefined) {
        headIndex = nextIndex++;
        out.push(startEvent(head, headIndex));
      }
      for (const delta of head.pending.splice(0)) out.push(deltaEvent(head, headIndex, delta));
      if (!head.ended && !all) break;
      if (head.signature !== undefined) out.push(signatureEvent(headIndex, head.signature));
      out.push(stopEvent(headIndex));
      queue.shift();
      headIndex = undefined;
    }
    return out;
  };

  return {
    start(canonicalIndex, kind, id = '', name = '') {
      const block: QueuedBlock = { kind, id, name, pending: [], ended: false };
      byCanonical.set(canonicalIndex, block);
      queue.push(block);
      return advance(false);
    },
    delta(canonicalIndex, delta) {
      const block = byCanonical.get(canonicalIndex);
      if (!block || block.ended || delta === '' || block.kind === 'redacted') return [];
      if (block === queue[0] && headIndex !== undefined) return [deltaEvent(block, headIndex, delta)];
      block.pending.push(delta);
      return [];
    },
    end(canonicalIndex, signature) {
      const block = byCanonical.get(canonicalIndex);
      if (!block || block.ended) return [];
      block.ended = true;
      if (signature !== undefined && block.kind === 'thinking') block.signature = signature;
      return block === queue[0] ? advance(false) : [];
    },
    drain: () => advance(true),
  };
}

import { functionCallItem, messageItem } from './output-items.ts';
import { reasoningItem } from './reasoning-items.ts';
import type { ItemIdFn, ItemStatus, ResponsesOutputItem } from './wire-types.ts';

/** One open or finished output item of a stream being encoded. */
export type StreamItemKind = 'text' | 'tool' | 'reasoning';

export interface StreamItem {
  kind: StreamItemKind;
  id: string;
  outputIndex: number;
  /** Text so far (message) or arguments so far (function call). */
  body: string;
  callId: string;
  name: string;
  /** A reasoning item's `encrypted_content` (signature or redacted data), known at its end. */
  encrypted: string | null;
  done: boolean;
  /** How it ended: `incomplete` when the response was cut while it was the last item open. */
  status?: ItemStatus;
}

export interface StreamItems {
  open(block: number, kind: StreamItemKind, callId?: string, name?: string): StreamItem;
  get(block: number): StreamItem | undefined;
  unfinished(): StreamItem[];
  /** The wire items; finished ones read how they ended (`completed` unless cut), the rest `openStatus`. */
  wire(openStatus: ItemStatus): ResponsesOutputItem[];
}

/**
 * The output items of a stream in order of opening: `output_index` is the position here, and a
 * canonical block index maps to exactly one item (blocks may interleave).
 */
export function createStreamItems(itemId: ItemIdFn): StreamItems {
  const items: StreamItem[] = [];
  const byBlock = new Map<number, StreamItem>();
  return {
    open(block, kind, callId = '', name = '') {
      const outputIndex = items.length;
      const item: StreamItem = {
        kind,
        id: itemId(kind === 'text' ? 'msg' : kind === 'tool' ? 'fc' : 'rs', outputIndex),
        outputIndex,
        body: '',
        callId,
        name,
        encrypted: null,
        done: false,
      };
      items.push(item);
      byBlock.set(block, item);
      return item;
    },
    get: (block) => byBlock.get(block),
    unfinished: () => items.filter((item) => !item.done),
    wire: (openStatus) => items.map((item) => toWire(item, item.done ? (item.status ?? 'completed') : openStatus)),
  };
}

export function toWire(item: StreamItem, status: ItemStatus): ResponsesOutputItem {
  switch (item.kind) {
    case 'text':
      return messageItem(item.id, item.body, status);
    case 'tool':
      return functionCallItem(item.id, item.callId, item.name, item.body, status);
    case 'reasoning':
      return reasoningItem(item.id, item.body, item.encrypted, status);
    default: {
      const exhaustive: never = item.kind;
      throw new Error(`unknown item kind ${String(exhaustive)}`);
    }
  }
}

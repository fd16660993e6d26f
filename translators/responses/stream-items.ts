import { functionCallItem, messageItem } from './output-items.ts';
import type { ItemIdFn, ItemStatus, ResponsesOutputItem } from './wire-types.ts';

/** One open or finished output item of a stream being encoded. */
export interface StreamItem {
  kind: 'text' | 'tool';
  id: string;
  outputIndex: number;
  /** Text so far (message) or arguments so far (function call). */
  body: string;
  callId: string;
  name: string;
  done: boolean;
}

export interface StreamItems {
  open(block: number, kind: 'text' | 'tool', callId?: string, name?: string): StreamItem;
  get(block: number): StreamItem | undefined;
  unfinished(): StreamItem[];
  /** The wire items; finished ones read `completed`, the rest `openStatus`. */
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
        id: itemId(kind === 'text' ? 'msg' : 'fc', outputIndex),
        outputIndex,
        body: '',
        callId,
        name,
        done: false,
      };
      items.push(item);
      byBlock.set(block, item);
      return item;
    },
    get: (block) => byBlock.get(block),
    unfinished: () => items.filter((item) => !item.done),
    wire: (openStatus) => items.map((item) => toWire(item, item.done ? 'completed' : openStatus)),
  };
}

export function toWire(item: StreamItem, status: ItemStatus): ResponsesOutputItem {
  return item.kind === 'text'
    ? messageItem(item.id, item.body, status)
    : functionCallItem(item.id, item.callId, item.name, item.body, status);
}

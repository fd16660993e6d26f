import { type StreamItem, toWire } from './stream-items.ts';
import type { ItemStatus } from './wire-types.ts';

/**
 * The Responses SSE events of one output item's life, as the openai SDK's accumulator expects
 * them (lib/responses/ResponseAccumulator): added, its content part opened, deltas, done. `emit`
 * numbers and frames each event (the encoder's `sequence_number`).
 */
export type Emit = (type: string, payload: Record<string, unknown>) => string;

const EMPTY_TEXT = { type: 'output_text', text: '', annotations: [], logprobs: [] } as const;

const at = (item: StreamItem) => ({ item_id: item.id, output_index: item.outputIndex });

/** `output_item.added`, and for a message its (empty) text part. */
export function openingEvents(emit: Emit, item: StreamItem): string[] {
  if (item.kind !== 'text')
    return [emit('response.output_item.added', { output_index: item.outputIndex, item: toWire(item, 'in_progress') })];
  return [
    emit('response.output_item.added', {
      output_index: item.outputIndex,
      item: { type: 'message', id: item.id, status: 'in_progress', role: 'assistant', content: [] },
    }),
    emit('response.content_part.added', { ...at(item), content_index: 0, part: EMPTY_TEXT }),
  ];
}

/** One delta; a reasoning item's text part opens with its first (an item may carry only encrypted content). */
export function deltaEvents(emit: Emit, item: StreamItem, delta: string): string[] {
  const opens = item.kind === 'reasoning' && item.body === '';
  item.body += delta;
  switch (item.kind) {
    case 'text':
      return [emit('response.output_text.delta', { ...at(item), content_index: 0, delta, logprobs: [] })];
    case 'tool':
      return [emit('response.function_call_arguments.delta', { ...at(item), delta })];
    case 'reasoning':
      return [
        ...(opens
          ? [
              emit('response.content_part.added', {
                ...at(item),
                content_index: 0,
                part: { type: 'reasoning_text', text: '' },
              }),
            ]
          : []),
        emit('response.reasoning_text.delta', { ...at(item), content_index: 0, delta }),
      ];
    default: {
      const exhaustive: never = item.kind;
      throw new Error(`unknown item kind ${String(exhaustive)}`);
    }
  }
}

/** The item's closing events, ending with `output_item.done`; the item is marked done, as `status`. */
export function closingEvents(emit: Emit, item: StreamItem, status: ItemStatus = 'completed'): string[] {
  item.done = true;
  item.status = status;
  const out: string[] = [];
  switch (item.kind) {
    case 'tool':
      out.push(emit('response.function_call_arguments.done', { ...at(item), name: item.name, arguments: item.body }));
      break;
    case 'reasoning':
      if (item.body)
        out.push(
          emit('response.reasoning_text.done', { ...at(item), content_index: 0, text: item.body }),
          emit('response.content_part.done', {
            ...at(item),
            content_index: 0,
            part: { type: 'reasoning_text', text: item.body },
          }),
        );
      break;
    case 'text':
      out.push(
        emit('response.output_text.done', { ...at(item), content_index: 0, text: item.body, logprobs: [] }),
        emit('response.content_part.done', { ...at(item), content_index: 0, part: { ...EMPTY_TEXT, text: item.body } }),
      );
      break;
    default: {
      const exhaustive: never = item.kind;
      throw new Error(`unknown item kind ${String(exhaustive)}`);
    }
  }
  out.push(emit('response.output_item.done', { output_index: item.outputIndex, item: toWire(item, status) }));
  return out;
}

import { toResponsesEnding } from './finish-reason.ts';
import type { AssistantContentPart } from '../canonical/request.ts';
import type { CanonicalResponse } from '../canonical/response.ts';
import type {
  ItemIdFn,
  ItemStatus,
  ResponsesFunctionCallItem,
  ResponsesMessageItem,
  ResponsesOutputItem,
} from './wire-types.ts';
import { encryptedContent, reasoningItem } from './reasoning-items.ts';

/**
 * Item ids derived from the response id and the item's output index, so a streamed response and
 * the same response encoded again for storage name their items alike (`msg_<id>_0`, `fc_<id>_1`).
 */
export function itemIdsFor(responseId: string): ItemIdFn {
  const suffix = responseId.startsWith('resp_') ? responseId.slice('resp_'.length) : responseId;
  return (kind, outputIndex) => `${kind}_${suffix}_${outputIndex}`;
}

export function messageItem(id: string, text: string, status: ItemStatus): ResponsesMessageItem {
  return {
    type: 'message',
    id,
    status,
    role: 'assistant',
    content: [{ type: 'output_text', text, annotations: [], logprobs: [] }],
  };
}

export function functionCallItem(
  id: string,
  callId: string,
  name: string,
  args: string,
  status: ItemStatus,
): ResponsesFunctionCallItem {
  return { type: 'function_call', id, call_id: callId, name, arguments: args, status };
}

/** One output item per canonical part, in order: text → message, tool call → function_call, reasoning → reasoning. */
export function outputItem(
  part: AssistantContentPart,
  outputIndex: number,
  itemId: ItemIdFn,
  status: ItemStatus = 'completed',
): ResponsesOutputItem {
  switch (part.type) {
    case 'text':
      return messageItem(itemId('msg', outputIndex), part.text, status);
    case 'tool-call':
      return functionCallItem(itemId('fc', outputIndex), part.id, part.name, part.arguments, status);
    case 'reasoning':
      return reasoningItem(itemId('rs', outputIndex), part.text, encryptedContent(part), status);
    default: {
      const exhaustive: never = part;
      throw new Error(`unknown content part ${JSON.stringify(exhaustive)}`);
    }
  }
}

/**
 * The `output` array of a finished response (what the service stores for item references). An
 * incomplete response (cut by its output cap or a content filter) has its last item `incomplete`,
 * as OpenAI reports it and as the stream encoder writes it.
 */
export function responseOutputItems(
  res: CanonicalResponse,
  itemId: ItemIdFn = itemIdsFor(res.id),
): ResponsesOutputItem[] {
  const cut = toResponsesEnding(res.finishReason).status === 'incomplete' ? res.content.length - 1 : -1;
  return res.content.map((part, i) => outputItem(part, i, itemId, i === cut ? 'incomplete' : 'completed'));
}

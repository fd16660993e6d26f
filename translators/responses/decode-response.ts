import * as v from 'valibot';
import type { AssistantContentPart } from '../canonical/request.ts';
import type { CanonicalResponse } from '../canonical/response.ts';
import { fromResponsesStatus } from './finish-reason.ts';
import { fromResponsesUsage } from './usage.ts';
import { reasoningTextOf } from './stream-decoder-blocks.ts';
import type { Json } from '../common/validation.ts';

const UpstreamResponse = v.looseObject({
  id: v.string(),
  created_at: v.optional(v.number()),
  status: v.optional(v.string()),
  incomplete_details: v.nullish(v.looseObject({ reason: v.nullish(v.string()) })),
  output: v.array(v.looseObject({ type: v.string() })),
  usage: v.nullish(v.unknown()),
});
const MessageItem = v.looseObject({
  content: v.array(v.looseObject({ type: v.string(), text: v.optional(v.string()), refusal: v.optional(v.string()) })),
});
const FunctionCallItem = v.looseObject({ call_id: v.string(), name: v.string(), arguments: v.string() });

/** Items of an upstream response → canonical content: messages, function calls and reasoning text (built-in tool items are skipped). */
function decodeOutput(output: ReadonlyArray<{ type: string }>): AssistantContentPart[] {
  const content: AssistantContentPart[] = [];
  for (const item of output) {
    if (item.type === 'message') {
      for (const part of v.parse(MessageItem, item).content) {
        if (part.type === 'output_text' && part.text !== undefined) content.push({ type: 'text', text: part.text });
        else if (part.type === 'refusal' && part.refusal !== undefined)
          content.push({ type: 'text', text: part.refusal });
      }
    } else if (item.type === 'reasoning') {
      const text = reasoningTextOf(item as Json);
      if (text) content.push({ type: 'reasoning', text });
    } else if (item.type === 'function_call') {
      const call = v.parse(FunctionCallItem, item);
      content.push({ type: 'tool-call', id: call.call_id, name: call.name, arguments: call.arguments });
    }
  }
  return content;
}

/** An upstream's non-stream Responses body → the canonical response (model = the gateway's id). */
export function decodeResponsesResponse(body: unknown, gatewayModel: string): CanonicalResponse {
  const parsed = v.safeParse(UpstreamResponse, body);
  if (!parsed.success) throw new Error(`invalid upstream Responses body: ${parsed.issues[0].message}`);
  const res = parsed.output;
  let content: AssistantContentPart[];
  try {
    content = decodeOutput(res.output);
  } catch (err) {
    throw new Error(`invalid upstream Responses output: ${err instanceof Error ? err.message : String(err)}`);
  }
  const hasToolCalls = content.some((part) => part.type === 'tool-call');
  return {
    id: res.id,
    model: gatewayModel,
    created: res.created_at ?? 0,
    content,
    finishReason: fromResponsesStatus(res.status, res.incomplete_details?.reason ?? undefined, hasToolCalls),
    usage: fromResponsesUsage(res.usage, res.output),
  };
}

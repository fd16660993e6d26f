import type { AssistantContentPart } from '../canonical/request.ts';
import type { CanonicalResponse } from '../canonical/response.ts';
import { mintId } from '../common/ids.ts';
import { fromChatFinishReason } from './finish-reason.ts';
import { fromChatUsage } from './usage.ts';
import { asNumber, asObject, asString, type Json } from '../common/validation.ts';

const fail = (why: string): never => {
  throw new Error(`invalid upstream chat completion: ${why}`);
};

/** Arguments as JSON text; a server that sends an object (some do) gets it serialised. */
function argumentsText(value: unknown): string {
  if (typeof value === 'string') return value;
  return value === undefined || value === null ? '' : JSON.stringify(value);
}

/** `tool_calls[i]` → a tool-call part; a missing id is minted, a missing name is an error. */
function toolCall(raw: unknown, i: number): AssistantContentPart[] {
  const call = asObject(raw);
  if (call?.type !== undefined && call.type !== 'function') return []; // custom tools are never requested
  const fn = asObject(call?.function);
  const name = asString(fn?.name);
  if (!name) return fail(`tool_calls[${i}] has no function name`);
  return [
    { type: 'tool-call', id: asString(call?.id) || mintId('call_'), name, arguments: argumentsText(fn?.arguments) },
  ];
}

/**
 * The assistant message → canonical parts: its reasoning, its text (a string, or text parts from servers that
 * send arrays), a refusal as text, then its tool calls (and a legacy `function_call`).
 */
function decodeMessage(message: Json): AssistantContentPart[] {
  const parts: AssistantContentPart[] = [];
  // DeepSeek's `reasoning_content`, or `reasoning` (vLLM, OpenRouter): the model's visible reasoning.
  const reasoning = asString(message.reasoning_content) ?? asString(message.reasoning);
  if (reasoning) parts.push({ type: 'reasoning', text: reasoning });
  const content = message.content;
  if (typeof content === 'string' && content !== '') parts.push({ type: 'text', text: content });
  if (Array.isArray(content)) {
    const text = content.map((p) => (asObject(p)?.type === 'text' ? (asString(asObject(p)?.text) ?? '') : '')).join('');
    if (text) parts.push({ type: 'text', text });
  }
  const refusal = asString(message.refusal);
  if (refusal) parts.push({ type: 'text', text: refusal });
  if (Array.isArray(message.tool_calls)) {
    for (const [i, call] of message.tool_calls.entries()) parts.push(...toolCall(call, i));
  }
  const legacy = asObject(message.function_call);
  if (legacy) parts.push(...toolCall({ type: 'function', function: legacy }, 0));
  return parts;
}

/**
 * An upstream's non-stream `chat.completion` → the canonical response (model = the gateway's id).
 * Only choice 0 is read: the gateway never asks for more. An `{error}` body throws.
 */
export function decodeChatResponse(body: unknown, gatewayModel: string): CanonicalResponse {
  const completion = asObject(body) ?? fail('not a JSON object');
  const error = asObject(completion.error);
  if (error) throw new Error(`upstream error: ${asString(error.message) ?? asString(error.type) ?? 'unknown'}`);
  if (!Array.isArray(completion.choices)) return fail('choices is not an array');
  const choices = completion.choices.map((c) => asObject(c));
  const choice = choices.find((c) => (asNumber(c?.index) ?? 0) === 0) ?? fail('no choices');
  const message = asObject(choice.message) ?? fail('choices[0].message is not an object');
  return {
    id: asString(completion.id) || mintId('chatcmpl-'),
    model: gatewayModel,
    created: asNumber(completion.created) ?? Math.floor(Date.now() / 1000),
    content: decodeMessage(message),
    finishReason: fromChatFinishReason(asString(choice.finish_reason)),
    usage: fromChatUsage(completion.usage),
  };
}

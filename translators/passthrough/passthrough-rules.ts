import { messageJson, parseJsonData, type EventSourceMessage, type ParsedMessage } from '../common/sse.ts';
import { asObject, type Json } from '../common/validation.ts';
import type { ChatChunkRepair } from './chat-chunk-repair.ts';
import { quotedModel, stringEnd, stringValueStart } from './json-text.ts';

/**
 * When the client speaks the upstream's own wire format, upstream events are forwarded as they
 * are — re-framed, never re-encoded. These rules are all a format needs for that: which event
 * ends a healthy stream, how to rename the model, which events to hold back, and the format's
 * own error event for a stream that breaks off or turns to garbage.
 */
export interface PassthroughRules {
  /**
   * `terminal`: the healthy end (`[DONE]`, `message_stop`); `error`: the upstream's own error
   * event (forwarded, and the stream ends); `garbage`: not this format at all.
   */
  classify(message: ParsedMessage): 'terminal' | 'error' | 'data' | 'garbage';
  /** The SSE text to send for this upstream event, or null to hold it back. */
  forward(message: EventSourceMessage, ctx: PassthroughContext): string | null;
  /** This format's error event, ending the stream. */
  errorEvent(code: string, message: string): string;
  /**
   * The whole response object a terminal event carries (Responses: `response.completed`), as the
   * client received it, for formats whose responses the gateway stores.
   */
  finalObject?(message: EventSourceMessage, ctx: PassthroughContext): Json | undefined;
  /**
   * A non-streamed answer's body text as the client receives it (model renamed), for formats
   * that pass those through as text; the others are encoded from the decoded response.
   */
  forwardBody?(text: string, ctx: PassthroughContext): string;
  /**
   * Whether the client sees the upstream's response id (chat, Messages: forwarded as written)
   * or the gateway's (Responses, whose stored responses are looked up by it). The call's record
   * keeps the id the client saw.
   */
  keepsUpstreamId: boolean;
  /**
   * For rules that keep the upstream's id: this event's data with the response id set to `id`
   * where the upstream left it out or empty (fill-missing-id.ts), or undefined when the event
   * has an id of its own or carries none in this format.
   */
  fillId?(message: ParsedMessage, id: string): string | undefined;
}

export interface PassthroughContext {
  gatewayModel: string;
  /** Chat completions: whether the client asked for the trailing usage chunk. */
  includeUsage: boolean;
  /** Responses: the id and conversation state the client sees, which the upstream never saw. */
  response?: { id: string; store: boolean; previousResponseId: string | null };
  /** Chat completions: per-stream state repairing chunks the openai SDK would refuse (one per stream). */
  chatRepair?: ChatChunkRepair;
}

/**
 * The first `"model"` key's value → the gateway's id, whatever the upstream called its model
 * (upstreams answer with dated names such as `gpt-4o-2024-08-06`). Inside a JSON string every
 * quote is escaped, so an unescaped `"model":` can only be a key; the first one is the chunk's
 * own (chat chunks and Anthropic's `message_start` both name the model before any content).
 * Spliced by hand, not by a regular expression: it runs on every streamed event, and a
 * replacement string would read `$&` or `$1` in a model id as a pattern.
 */
export function renameModel(data: string, ctx: PassthroughContext): string {
  for (let key = data.indexOf('"model"'); key !== -1; key = data.indexOf('"model"', key + 1)) {
    const start = stringValueStart(data, key + 7);
    const end = start === -1 ? -1 : stringEnd(data, start);
    if (end !== -1) return `${data.slice(0, key)}"model":${quotedModel(ctx.gatewayModel)}${data.slice(end)}`;
  }
  return data;
}

/** Upstream data must be a JSON object; anything else is garbage the client must not receive. */
export function parseObject(data: string): Json | undefined {
  return asObject(parseJsonData(data));
}

/** A message's data as a JSON object, from its reader's parse when it made one (`ParsedMessage`). */
export function objectOf(message: ParsedMessage): Json | undefined {
  return asObject(messageJson(message));
}

import type { StreamEvent } from '../canonical/stream.ts';
import { emptyUsage, mergeUsage, type CanonicalUsage } from '../canonical/usage.ts';
import { formatSse } from '../common/sse.ts';
import { encoderLifecycle } from '../common/encoder-lifecycle.ts';
import type { StreamTranslator } from '../common/stream-translator.ts';
import { terminalEventType, toResponsesEnding } from './finish-reason.ts';
import { itemIdsFor } from './output-items.ts';
import { buildResponseObject, resolveEcho, responsesErrorCode, type ResponseObjectArgs } from './response-object.ts';
import { closingEvents, deltaEvents, openingEvents } from './stream-item-events.ts';
import { createStreamItems, type StreamItem } from './stream-items.ts';
import { encryptedContent } from './reasoning-items.ts';
import { toResponsesUsage } from './usage.ts';
import type { ItemIdFn, ResponsesEcho } from './wire-types.ts';

export interface ResponsesStreamEncoderOptions extends Partial<ResponsesEcho> {
  responseId: string;
  /** The gateway's model id. */
  model: string;
  /** Unix seconds. */
  createdAt: number;
  itemId?: ItemIdFn;
  /** Clock for `completed_at` (Unix seconds); without it the field is left out. */
  now?: () => number;
}

/**
 * Canonical events → the Responses SSE sequence: `response.created`, `response.in_progress`, then
 * per output item `output_item.added` … `output_item.done`, and one terminal event
 * (`response.completed` / `response.incomplete` / `response.failed`). Every event carries a
 * `sequence_number` from 0. A canonical error becomes an `error` event — with the fields at the
 * top level as documented and nested under `error` as OpenAI sends them (the SDKs throw on that) —
 * followed by `response.failed`.
 */
export function createResponsesStreamEncoder(
  opts: ResponsesStreamEncoderOptions,
): StreamTranslator<StreamEvent, string> {
  const echo = resolveEcho(opts);
  const items = createStreamItems(opts.itemId ?? itemIdsFor(opts.responseId));
  let sequence = 0;
  let started = false;
  let usage: CanonicalUsage | null = null;

  const sse = (type: string, payload: Record<string, unknown>) =>
    formatSse({ type, sequence_number: sequence++, ...payload }, type);
  const snapshot = (args: Pick<ResponseObjectArgs, 'status' | 'output' | 'usage'> & Partial<ResponseObjectArgs>) =>
    buildResponseObject({ id: opts.responseId, model: opts.model, createdAt: opts.createdAt, echo, ...args });

  const start = (): string[] => {
    started = true;
    const response = snapshot({ status: 'in_progress', output: [], usage: null });
    return [sse('response.created', { response }), sse('response.in_progress', { response })];
  };

  /**
   * The item whose block ended last, its closing events held until the next item opens or the
   * response ends: a response cut by its output cap ends `incomplete`, and so does the item it
   * cut, as OpenAI reports it (the canonical stream ends the block before it says why).
   */
  let ending: StreamItem | undefined;
  const hold = (item: StreamItem): string[] => {
    const out = release('completed');
    ending = item;
    return out;
  };
  const release = (status: 'completed' | 'incomplete'): string[] => {
    const item = ending;
    ending = undefined;
    return item && !item.done ? closingEvents(sse, item, status) : [];
  };

  const handle = (event: StreamEvent): string[] => {
    switch (event.type) {
      case 'message-start':
        if (event.usage) usage = mergeUsage(usage ?? emptyUsage(), event.usage);
        return started ? [] : start();
      case 'text-start':
        return [...release('completed'), ...openingEvents(sse, items.open(event.index, 'text'))];
      case 'tool-call-start':
        return [...release('completed'), ...openingEvents(sse, items.open(event.index, 'tool', event.id, event.name))];
      case 'reasoning-start': {
        const out = release('completed');
        const item = items.open(event.index, 'reasoning');
        if (event.redacted !== undefined) item.encrypted = encryptedContent({ redacted: event.redacted });
        return [...out, ...openingEvents(sse, item)];
      }
      case 'text-delta':
      case 'tool-call-delta':
      case 'reasoning-delta': {
        const item = items.get(event.index);
        return !item || item.done || !event.delta ? [] : deltaEvents(sse, item, event.delta);
      }
      case 'reasoning-end': {
        const item = items.get(event.index);
        if (item && event.signature !== undefined) item.encrypted = encryptedContent({ signature: event.signature });
        return item && !item.done ? hold(item) : [];
      }
      case 'text-end':
      case 'tool-call-end': {
        const item = items.get(event.index);
        return item && !item.done ? hold(item) : [];
      }
      case 'usage':
        usage = mergeUsage(usage ?? emptyUsage(), event.usage);
        return [];
      case 'finish': {
        const ended = toResponsesEnding(event.finishReason);
        const cut = ended.status === 'incomplete' ? 'incomplete' : 'completed';
        const closing = [...release(cut), ...items.unfinished().flatMap((item) => closingEvents(sse, item, cut))];
        const failed = ended.status === 'failed';
        const response = snapshot({
          status: ended.status,
          output: items.wire('incomplete'),
          usage: toResponsesUsage(event.usage),
          incompleteDetails: ended.incompleteDetails,
          error: failed ? { code: 'server_error', message: 'The model failed to generate a response.' } : null,
          completedAt: ended.status === 'completed' ? opts.now?.() : undefined,
        });
        return [...closing, sse(terminalEventType(ended.status), { response })];
      }
      case 'error':
        return fail(event.error.code, event.error.message);
      default: {
        const exhaustive: never = event;
        throw new Error(`unknown stream event ${JSON.stringify(exhaustive)}`);
      }
    }
  };

  const fail = (code: string, message: string): string[] => {
    const out = started ? release('completed') : start();
    out.push(sse('error', { code, message, param: null, error: { type: 'server_error', code, message, param: null } }));
    const response = snapshot({
      status: 'failed',
      output: items.wire('incomplete'),
      usage: usage ? toResponsesUsage(usage) : null,
      error: { code: responsesErrorCode(code), message },
    });
    out.push(sse('response.failed', { response }));
    return out;
  };

  const encode = (event: StreamEvent): string[] =>
    !started && event.type !== 'message-start' && event.type !== 'error'
      ? [...start(), ...handle(event)]
      : handle(event);
  // Decoders always end with finish or error; a stream cut short must still not look healthy.
  return encoderLifecycle(encode, () =>
    fail('stream_truncated', 'The response stream ended before the response was complete.'),
  );
}

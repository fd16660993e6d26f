import type { StreamError, StreamEvent } from '../canonical/stream.ts';
import { emptyUsage, mergeUsage, type CanonicalUsage } from '../canonical/usage.ts';
import { formatSse } from '../common/sse.ts';
import { encoderLifecycle } from '../common/encoder-lifecycle.ts';
import type { StreamTranslator } from '../common/stream-translator.ts';
import { toAnthropicStopReason } from './finish-reason.ts';
import { buildAnthropicMessage } from './message-object.ts';
import { createBlockQueue } from './stream-block-queue.ts';
import { toAnthropicDeltaUsage, toAnthropicUsage } from './usage.ts';
import type { AnthropicStreamErrorType } from './wire-types.ts';

export interface AnthropicStreamEncoderOptions {
  /** The `msg_…` id the client sees. */
  id: string;
  /** The gateway's model id. */
  model: string;
}

/** Canonical error codes that mean "try again later" become `overloaded_error`; the rest `api_error`. */
function errorType(error: StreamError): AnthropicStreamErrorType {
  return error.code === 'upstream_overloaded' || error.code === 'overloaded' ? 'overloaded_error' : 'api_error';
}

/** `events`, after the `message_start` events when the event being encoded is the first. */
const after = (prefix: string[] | undefined, events: string[]): string[] => (prefix ? [...prefix, ...events] : events);

export function anthropicErrorEvent(error: StreamError): string {
  return formatSse({ type: 'error', error: { type: errorType(error), message: error.message } }, 'error');
}

/**
 * Canonical events → Anthropic Messages SSE text, event by event:
 * `message_start`, `ping`, per block `content_block_start` / `content_block_delta`* /
 * `content_block_stop` (serialised, see stream-block-queue.ts), `message_delta` (stop reason and
 * the full usage, including the real input tokens), `message_stop`. `message_start` reports the
 * input tokens known at the start (0 when the upstream reports them only at the end) and, as
 * Anthropic does, 1 output token. An `error` becomes `event: error` and the stream ends without
 * `message_stop`, so `@anthropic-ai/sdk` rejects `finalMessage()`.
 */
export function createAnthropicStreamEncoder(
  opts: AnthropicStreamEncoderOptions,
): StreamTranslator<StreamEvent, string> {
  const blocks = createBlockQueue();
  let started = false;
  let usage: CanonicalUsage = emptyUsage();

  const messageStart = (startUsage: Partial<CanonicalUsage> = {}): string[] => {
    started = true;
    const message = buildAnthropicMessage({
      id: opts.id,
      model: opts.model,
      content: [],
      stopReason: null,
      stopSequence: null,
      usage: toAnthropicUsage(startUsage, 1),
    });
    return [formatSse({ type: 'message_start', message }, 'message_start'), formatSse({ type: 'ping' }, 'ping')];
  };

  const encode = (event: StreamEvent): string[] => {
    if (event.type === 'message-start') {
      if (started) return [];
      usage = mergeUsage(usage, event.usage ?? {});
      return messageStart(event.usage);
    }
    if (event.type === 'error') {
      return [anthropicErrorEvent(event.error)];
    }
    const prefix = started ? undefined : messageStart();
    switch (event.type) {
      case 'text-start':
        return after(prefix, blocks.start(event.index, 'text'));
      case 'tool-call-start':
        return after(prefix, blocks.start(event.index, 'tool', event.id, event.name));
      case 'reasoning-start':
        return after(
          prefix,
          event.redacted === undefined
            ? blocks.start(event.index, 'thinking')
            : blocks.start(event.index, 'redacted', event.redacted),
        );
      case 'text-delta':
      case 'tool-call-delta':
      case 'reasoning-delta':
        return after(prefix, blocks.delta(event.index, event.delta));
      case 'text-end':
      case 'tool-call-end':
        return after(prefix, blocks.end(event.index));
      case 'reasoning-end':
        return after(prefix, blocks.end(event.index, event.signature));
      case 'usage':
        usage = mergeUsage(usage, event.usage);
        return prefix ?? [];
      case 'finish': {
        usage = mergeUsage(usage, event.usage);
        const stopReason = toAnthropicStopReason(event.finishReason);
        const delta = {
          stop_reason: stopReason,
          stop_sequence: stopReason === 'stop_sequence' ? (event.stopSequence ?? null) : null,
          stop_details: null,
          container: null,
        };
        return [
          ...(prefix ?? []),
          ...blocks.drain(),
          formatSse({ type: 'message_delta', delta, usage: toAnthropicDeltaUsage(usage) }, 'message_delta'),
          formatSse({ type: 'message_stop' }, 'message_stop'),
        ];
      }
      default: {
        const exhaustive: never = event;
        throw new Error(`unknown stream event ${JSON.stringify(exhaustive)}`);
      }
    }
  };

  return encoderLifecycle(encode, () => [
    anthropicErrorEvent({ code: 'stream_truncated', message: 'the stream ended before the message was complete' }),
  ]);
}

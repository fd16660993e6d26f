import { invalidUpstreamStream, UpstreamStreamError } from '../canonical/errors.ts';
import type { StreamEvent } from '../canonical/stream.ts';
import { addToolCall, withMostCalls } from '../canonical/usage.ts';
import { mintId } from '../common/ids.ts';
import { messageJson, type EventSourceMessage } from '../common/sse.ts';
import type { StreamTranslator } from '../common/stream-translator.ts';
import { fromAnthropicStopReason } from './finish-reason.ts';
import { createBlockTracker } from './stream-decoder-blocks.ts';
import {
  inputUsage,
  mergeUsageParts,
  readAnthropicUsage,
  toCanonicalUsage,
  type AnthropicUsageParts,
} from './usage.ts';
import { asNumber, asObject, asString, type Json } from '../common/validation.ts';

export interface AnthropicStreamDecoderOptions {
  /** The gateway's model id, named in `message-start`. */
  model: string;
  /** Unix seconds for `message-start`; Anthropic streams carry no timestamp. Defaults to now. */
  created?: number;
}

/** Anthropic's `error` event → a canonical error code: overload is told apart, the rest is `upstream_error`. */
function upstreamError(data: Json | undefined): StreamEvent {
  const error = asObject(data?.error);
  const type = asString(error?.type);
  return {
    type: 'error',
    error: {
      code: type === 'overloaded_error' ? 'upstream_overloaded' : 'upstream_error',
      message: asString(error?.message) ?? type ?? 'the upstream reported an error',
    },
  };
}

/**
 * An upstream's Anthropic Messages SSE (already parsed into messages) → canonical events.
 * `message_start` gives the id and input usage; text and tool_use blocks map one to one (others
 * are skipped); `message_delta` gives the stop reason and cumulative usage; only `message_stop`
 * releases the `finish`, with usage merged field by field (later figures win). An `error` event
 * or non-JSON data ends the stream with one canonical error; a stream that ends without
 * `message_stop` ends with `stream_truncated`.
 */
/** A server tool's name as a usage key. */
const TOOL_NAME = /^[a-z][a-z0-9_]{0,63}$/;

export function createAnthropicStreamDecoder(
  opts: AnthropicStreamDecoderOptions,
): StreamTranslator<EventSourceMessage, StreamEvent> {
  const blocks = createBlockTracker();
  let started = false;
  let done = false;
  let usage: AnthropicUsageParts = {};
  let stopReason: string | undefined;
  let stopSequence: string | undefined;
  /** The upstream's own tool calls (`server_tool_use` blocks) seen so far, by tool. */
  const calls: Record<string, number> = {};

  const handle = (type: string, data: Json): StreamEvent[] => {
    if (type === 'ping') return [];
    if (type === 'message_start') {
      if (started) throw new UpstreamStreamError('a second message_start');
      started = true;
      const message = asObject(data.message) ?? {};
      usage = readAnthropicUsage(message.usage);
      return [
        {
          type: 'message-start',
          id: asString(message.id) || mintId('msg_'),
          model: opts.model,
          created: opts.created ?? Math.floor(Date.now() / 1000),
          usage: inputUsage(usage),
        },
      ];
    }
    if (!started) throw new UpstreamStreamError(`the upstream stream began with ${type} instead of message_start`);
    const index = asNumber(data.index) ?? -1;
    switch (type) {
      case 'content_block_start': {
        const block = asObject(data.content_block) ?? {};
        const tool = block.type === 'server_tool_use' ? asString(block.name) : undefined;
        if (!tool || !TOOL_NAME.test(tool)) return blocks.start(index, block);
        // Counted as they start, so a stream cut before its usage still bills them.
        const builtInToolCalls = { ...addToolCall(calls, tool) };
        return [...blocks.start(index, block), { type: 'usage', usage: { builtInToolCalls } }];
      }
      case 'content_block_delta':
        return blocks.delta(index, asObject(data.delta) ?? {});
      case 'content_block_stop':
        return blocks.stop(index);
      case 'message_delta': {
        const delta = asObject(data.delta) ?? {};
        stopReason = asString(delta.stop_reason) ?? stopReason;
        stopSequence = asString(delta.stop_sequence) ?? stopSequence;
        usage = mergeUsageParts(usage, readAnthropicUsage(data.usage));
        // Said at once, not only with the finish: a stream that breaks after it is charged its usage.
        return [{ type: 'usage', usage: withMostCalls(toCanonicalUsage(usage), calls) }];
      }
      case 'message_stop': {
        done = true;
        const finish: StreamEvent = {
          type: 'finish',
          finishReason: fromAnthropicStopReason(stopReason),
          usage: withMostCalls(toCanonicalUsage(usage), calls),
        };
        if (stopSequence !== undefined) finish.stopSequence = stopSequence;
        return [...blocks.closeAll(), finish];
      }
      default:
        // Anthropic may add event types (its versioning policy says so); unknown ones are ignored.
        return [];
    }
  };

  /** The stream's last event: nothing is decoded after it. */
  const last = (event: StreamEvent): StreamEvent[] => {
    done = true;
    return [event];
  };

  return {
    push(message) {
      if (done || message.event === 'ping' || message.data === '') return [];
      const data = asObject(messageJson(message));
      if (message.event === 'error' || data?.type === 'error') return last(upstreamError(data));
      try {
        if (!data) throw new UpstreamStreamError('the upstream sent data that is not a JSON object');
        return handle(asString(data.type) ?? message.event ?? '', data);
      } catch (err) {
        return last(invalidUpstreamStream(err));
      }
    },
    end() {
      if (done) return [];
      return last({
        type: 'error',
        error: { code: 'stream_truncated', message: 'the upstream stream ended without message_stop' },
      });
    },
  };
}

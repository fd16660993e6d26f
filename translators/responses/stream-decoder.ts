import { invalidUpstreamStream, UpstreamStreamError } from '../canonical/errors.ts';
import type { FinishReason } from '../canonical/finish-reason.ts';
import type { StreamEvent } from '../canonical/stream.ts';
import { addToolCall, type CanonicalUsage, withMostCalls } from '../canonical/usage.ts';
import { messageJson, type EventSourceMessage } from '../common/sse.ts';
import type { StreamTranslator } from '../common/stream-translator.ts';
import { fromResponsesStatus } from './finish-reason.ts';
import { asNumber, asObject, asString, type Json } from '../common/validation.ts';
import { createBlockTracker } from './stream-decoder-blocks.ts';
import { builtInToolOf, fromResponsesUsage } from './usage.ts';

const TERMINAL: Record<string, string> = {
  'response.completed': 'completed',
  'response.incomplete': 'incomplete',
  'response.failed': 'failed',
};

/** The `error` event: its code and message at the top level as documented, or nested under `error` as OpenAI sends them. */
function upstreamError(data: Json): StreamEvent {
  const nested = asObject(data.error);
  const code = asString(data.code) ?? asString(nested?.code) ?? asString(nested?.type) ?? 'upstream_error';
  return {
    type: 'error',
    error: { code, message: asString(data.message) ?? asString(nested?.message) ?? 'the upstream reported an error' },
  };
}

/**
 * A `response.failed` event's `response.error` (`{code, message}`) as the stream's error.
 * @see https://platform.openai.com/docs/api-reference/responses-streaming/response/failed
 */
export function failedResponseError(response: Json | undefined): Extract<StreamEvent, { type: 'error' }> {
  const error = asObject(response?.error);
  return {
    type: 'error',
    error: {
      code: asString(error?.code) ?? 'upstream_error',
      message: `the upstream response failed: ${asString(error?.message) ?? 'no reason given'}`,
    },
  };
}

/**
 * An upstream's Responses SSE (already parsed into messages) → canonical events. Text blocks open
 * on their first delta, function calls on `output_item.added`; the terminal `response.*` event's
 * status and usage become the `finish`, held until the upstream stream really ends. An `error`
 * event, a failed response (its usage, then the error) or garbage ends the stream with one
 * canonical error; no terminal event means
 * `stream_truncated`.
 */
export function createResponsesStreamDecoder(opts: {
  model: string;
  /**
   * The client speaks Responses too and gets the upstream's events as they are (passthrough): a
   * failed response is then its answer, ending as a finish (`error`) that is stored and settled
   * as the upstream's, where any other client gets the error.
   */
  failedIsAnswer?: boolean;
}): StreamTranslator<EventSourceMessage, StreamEvent> {
  const blocks = createBlockTracker();
  let started = false;
  let stopped = false;
  let finish: { finishReason: FinishReason; usage: CanonicalUsage } | undefined;
  /** Calls to built-in tools seen so far, by tool. */
  const calls: Record<string, number> = {};

  /** The stream's last event: nothing is decoded after it. */
  const last = (event: StreamEvent): StreamEvent[] => {
    stopped = true;
    return [event];
  };

  const handle = (data: Json, type: string): StreamEvent[] => {
    if (type === 'error') return last(upstreamError(data));
    if (type === 'response.created' && !started) {
      const response = asObject(data.response);
      const id = asString(response?.id);
      if (!id) throw new UpstreamStreamError('response.created without a response id');
      started = true;
      return [{ type: 'message-start', id, model: opts.model, created: asNumber(response?.created_at) ?? 0 }];
    }
    if (!started) {
      if (type === 'keepalive' || type === 'response.queued') return [];
      throw new UpstreamStreamError(`the upstream stream began with ${type} instead of response.created`);
    }
    const outputIndex = asNumber(data.output_index) ?? -1;
    switch (type) {
      case 'response.output_item.added':
        return blocks.itemAdded(outputIndex, asObject(data.item) ?? {});
      case 'response.output_text.delta':
      case 'response.refusal.delta':
        return blocks.textDelta(outputIndex, asNumber(data.content_index) ?? 0, asString(data.delta) ?? '');
      case 'response.output_text.done':
        return blocks.textDone(outputIndex, asNumber(data.content_index) ?? 0, asString(data.text) ?? '');
      case 'response.refusal.done':
        return blocks.textDone(outputIndex, asNumber(data.content_index) ?? 0, asString(data.refusal) ?? '');
      case 'response.reasoning_text.delta':
        return blocks.reasoningDelta(
          outputIndex,
          `content:${asNumber(data.content_index) ?? 0}`,
          asString(data.delta) ?? '',
        );
      case 'response.reasoning_summary_text.delta':
        return blocks.reasoningDelta(
          outputIndex,
          `summary:${asNumber(data.summary_index) ?? 0}`,
          asString(data.delta) ?? '',
        );
      case 'response.function_call_arguments.delta':
        return blocks.argumentsDelta(outputIndex, asString(data.delta) ?? '');
      case 'response.function_call_arguments.done':
        return blocks.argumentsDone(outputIndex, asString(data.arguments) ?? '');
      case 'response.output_item.done': {
        const item = asObject(data.item) ?? {};
        const tool = builtInToolOf(item);
        if (!tool) return blocks.itemDone(outputIndex, item);
        // Counted as they finish, so a stream cut before its terminal event still bills them.
        const builtInToolCalls = { ...addToolCall(calls, tool) };
        return [...blocks.itemDone(outputIndex, item), { type: 'usage', usage: { builtInToolCalls } }];
      }
      default:
        break;
    }
    const status = TERMINAL[type];
    if (status) {
      const response = asObject(data.response);
      const usage = withMostCalls(fromResponsesUsage(response?.usage, response?.output), calls);
      if (!opts.failedIsAnswer && (asString(response?.status) ?? status) === 'failed') {
        // A failed response is an error for every client format (no finish a client would take
        // for an answer); what it used is still charged, as the upstream bills it.
        stopped = true;
        return [...blocks.closeAll(), { type: 'usage', usage }, failedResponseError(response)];
      }
      const details = asObject(response?.incomplete_details);
      finish = {
        finishReason: fromResponsesStatus(
          asString(response?.status) ?? status,
          asString(details?.reason),
          blocks.hasToolCalls(),
        ),
        usage,
      };
      stopped = true;
      return blocks.closeAll();
    }
    return []; // lifecycle, built-in tool and annotation events carry nothing canonical; reasoning `.done` events repeat the deltas
  };

  return {
    push(message) {
      if (stopped || message.data === '[DONE]') return [];
      const data = asObject(messageJson(message));
      const type = asString(data?.type) ?? message.event;
      try {
        if (!data || !type) throw new UpstreamStreamError('the upstream sent data that is not a Responses event');
        return handle(data, type);
      } catch (err) {
        return last(invalidUpstreamStream(err));
      }
    },
    end() {
      if (finish) return [{ type: 'finish', ...finish }];
      return stopped
        ? []
        : [
            {
              type: 'error',
              error: { code: 'stream_truncated', message: 'the upstream stream ended before response.completed' },
            },
          ];
    },
  };
}

import { invalidUpstreamStream, UpstreamStreamError } from '../canonical/errors.ts';
import type { FinishReason } from '../canonical/finish-reason.ts';
import type { StreamEvent } from '../canonical/stream.ts';
import { emptyUsage, mergeUsage, type CanonicalUsage } from '../canonical/usage.ts';
import { mintId } from '../common/ids.ts';
import { messageJson, type EventSourceMessage } from '../common/sse.ts';
import type { StreamTranslator } from '../common/stream-translator.ts';
import { fromChatFinishReason } from './finish-reason.ts';
import { createBlockTracker } from './stream-decoder-blocks.ts';
import { readChatUsage } from './usage.ts';
import { asNumber, asObject, asString, type Json } from '../common/validation.ts';

export interface ChatStreamDecoderOptions {
  /** The gateway's model id, named in `message-start`. */
  model: string;
  /** Unix seconds for `message-start` when the upstream's first chunk has no `created`. Defaults to now. */
  created?: number;
}

/** `{"error": {...}}` (OpenAI, most servers), `{"error": "text"}` or `{"object": "error", …}` (older vLLM). */
function upstreamError(data: Json): StreamEvent | undefined {
  const nested = asObject(data.error);
  if (!nested && typeof data.error !== 'string' && data.object !== 'error') return undefined;
  const message =
    asString(nested?.message) ?? asString(data.error) ?? asString(data.message) ?? 'the upstream reported an error';
  return { type: 'error', error: { code: 'upstream_error', message } };
}

/**
 * An upstream's chat-completions SSE (already parsed into messages) → canonical events.
 * `message-start` comes from the first chunk; deltas map through the block tracker; `refusal`
 * deltas are kept as text, and `reasoning_content` / `reasoning` deltas (DeepSeek, vLLM,
 * OpenRouter) become a reasoning block. The finish_reason
 * closes every block, but the `finish` itself is held until `[DONE]` (or the end of the stream),
 * because usage arrives in a trailing `choices: []` chunk after it; the usage is passed on as a
 * `usage` event when it comes. An error chunk or non-JSON
 * data ends the stream with one canonical error; an end with neither finish_reason nor `[DONE]`
 * is `stream_truncated`.
 */
export function createChatStreamDecoder(
  opts: ChatStreamDecoderOptions,
): StreamTranslator<EventSourceMessage, StreamEvent> {
  const blocks = createBlockTracker();
  let started = false;
  let done = false;
  let finishReason: FinishReason | undefined;
  let usage: CanonicalUsage = emptyUsage();

  const start = (chunk: Json): StreamEvent => {
    started = true;
    const created = asNumber(chunk.created);
    return {
      type: 'message-start',
      id: asString(chunk.id) || mintId('chatcmpl-'),
      model: opts.model,
      created: created && created > 0 ? created : (opts.created ?? Math.floor(Date.now() / 1000)),
    };
  };

  const handleChunk = (chunk: Json): StreamEvent[] => {
    if (!Array.isArray(chunk.choices) && !asObject(chunk.usage))
      throw new UpstreamStreamError('the upstream sent data that is not a chat.completion.chunk');
    const out: StreamEvent[] = started ? [] : [start(chunk)];
    const reported = asObject(chunk.usage);
    if (reported) usage = mergeUsage(usage, readChatUsage(reported));
    if (!finishReason) chunkDeltas(chunk, out); // after the finish_reason only usage counts
    // Said at once, after the chunk's own events, not only with the finish held for `[DONE]`: a
    // stream that breaks after its usage chunk is charged that usage, not an estimate.
    if (reported) out.push({ type: 'usage', usage });
    return out;
  };

  /** The chunk's deltas (and its finish_reason, which closes every block), onto `out`. */
  const chunkDeltas = (chunk: Json, out: StreamEvent[]): void => {
    // Runs on every streamed chunk: a loop and no empty arrays, rather than map/find and spreads of [].
    let choice: Json | undefined;
    if (Array.isArray(chunk.choices))
      for (const c of chunk.choices) {
        const candidate = asObject(c);
        if ((asNumber(candidate?.index) ?? 0) === 0) {
          choice = candidate;
          break;
        }
      }
    if (!choice) return;
    const delta = asObject(choice.delta) ?? {};
    const reasoning = asString(delta.reasoning_content) ?? asString(delta.reasoning);
    if (reasoning) out.push(...blocks.reasoning(reasoning));
    const content = asString(delta.content);
    if (content) out.push(...blocks.text(content));
    const refusal = asString(delta.refusal);
    if (refusal) out.push(...blocks.text(refusal));
    if (Array.isArray(delta.tool_calls))
      for (const raw of delta.tool_calls) out.push(...blocks.toolCall(asObject(raw) ?? {}));
    const reason = asString(choice.finish_reason);
    if (reason) {
      finishReason = fromChatFinishReason(reason);
      out.push(...blocks.closeAll());
    }
  };

  /** `[DONE]`: the healthy end. Without a finish_reason before it the ending reads `other`. */
  const handleDone = (): StreamEvent[] => {
    done = true;
    if (!started)
      return [
        {
          type: 'error',
          error: { code: 'invalid_upstream_stream', message: 'the upstream stream ended with [DONE] before any chunk' },
        },
      ];
    const closing = finishReason ? [] : blocks.closeAll();
    return [...closing, { type: 'finish', finishReason: finishReason ?? fromChatFinishReason(undefined), usage }];
  };

  /** The stream's last event: nothing is decoded after it. */
  const last = (event: StreamEvent): StreamEvent[] => {
    done = true;
    return [event];
  };

  return {
    push(message) {
      if (done || message.data === '') return [];
      try {
        if (message.data.trim() === '[DONE]') return handleDone();
        const data = asObject(messageJson(message));
        if (!data) throw new UpstreamStreamError('the upstream sent data that is not a JSON object');
        const error = upstreamError(data) ?? (message.event === 'error' ? upstreamError({ error: data }) : undefined);
        return error ? last(error) : handleChunk(data);
      } catch (err) {
        return last(invalidUpstreamStream(err));
      }
    },
    end() {
      if (done) return [];
      if (finishReason) return last({ type: 'finish', finishReason, usage });
      return last({
        type: 'error',
        error: { code: 'stream_truncated', message: 'the upstream stream ended before a finish_reason' },
      });
    },
  };
}

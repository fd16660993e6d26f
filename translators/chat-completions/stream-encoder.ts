import type { StreamError, StreamEvent } from '../canonical/stream.ts';
import { emptyUsage, mergeUsage, type CanonicalUsage } from '../canonical/usage.ts';
import { formatSse } from '../common/sse.ts';
import { encoderLifecycle } from '../common/encoder-lifecycle.ts';
import type { StreamTranslator } from '../common/stream-translator.ts';
import { toChatFinishReason } from './finish-reason.ts';
import { toChatUsage } from './usage.ts';
import type { ChatCompletionChunk, ChatDelta, ChatErrorObject, ChatFinishReason } from './wire-types.ts';

export interface ChatStreamEncoderOptions {
  /** The `chatcmpl-…` id the client sees, the same on every chunk. */
  id: string;
  /** The gateway's model id. */
  model: string;
  /** Unix seconds, the same on every chunk. */
  created: number;
  /** `stream_options.include_usage`: `"usage": null` on every chunk and a final usage-only chunk. */
  includeUsage: boolean;
}

/**
 * The SSE error chunk: `data: {"error": {...}}`, as OpenAI sends it mid-stream. The openai SDK's
 * `Stream` throws an `APIError` on any data chunk with an `error` field (core/streaming.js), so
 * the client's iteration fails instead of completing; no `[DONE]` follows.
 */
export function chatErrorEvent(error: StreamError): string {
  const body: ChatErrorObject = { message: error.message, type: 'server_error', param: null, code: error.code };
  return formatSse({ error: body });
}

/**
 * Canonical events → chat-completions SSE, chunk for chunk as OpenAI sends them: a first chunk
 * with `{role: 'assistant', content: '', refusal: null}`, then `{content}` deltas and tool-call
 * deltas (`index` is the call's ordinal among this message's tool calls — 0, 1, 2… — not the
 * canonical block index; `id`, `type` and `name` only on its first piece), a finish chunk with an
 * empty delta, with `include_usage` a `choices: []` chunk carrying the usage, and `data: [DONE]`.
 * An error becomes `chatErrorEvent` and nothing follows; an input that ends without a finish
 * ends with a `stream_truncated` error.
 */
export function createChatStreamEncoder(opts: ChatStreamEncoderOptions): StreamTranslator<StreamEvent, string> {
  const toolOrdinals = new Map<number, number>();
  let started = false;
  let usage: CanonicalUsage = emptyUsage();

  const envelope = (choices: ChatCompletionChunk['choices']): ChatCompletionChunk => ({
    id: opts.id,
    object: 'chat.completion.chunk',
    created: opts.created,
    model: opts.model,
    choices,
  });
  const chunk = (delta: ChatDelta, finishReason: ChatFinishReason | null = null): string => {
    const body = envelope([{ index: 0, delta, logprobs: null, finish_reason: finishReason }]);
    if (opts.includeUsage) body.usage = null;
    return formatSse(body);
  };
  const first = (): string[] => {
    started = true;
    return [chunk({ role: 'assistant', content: '', refusal: null })];
  };

  const encode = (event: StreamEvent): string[] => {
    if (event.type === 'message-start') {
      usage = mergeUsage(usage, event.usage ?? {});
      return started ? [] : first();
    }
    if (event.type === 'error') {
      return [chatErrorEvent(event.error)];
    }
    const out = started ? [] : first();
    switch (event.type) {
      case 'text-start':
      case 'text-end':
      case 'tool-call-end':
      case 'reasoning-start':
      case 'reasoning-end':
        return out;
      case 'reasoning-delta':
        if (event.delta) out.push(chunk({ reasoning_content: event.delta }));
        return out;
      case 'text-delta':
        if (event.delta) out.push(chunk({ content: event.delta }));
        return out;
      case 'tool-call-start': {
        if (toolOrdinals.has(event.index)) return out;
        const k = toolOrdinals.size;
        toolOrdinals.set(event.index, k);
        out.push(
          chunk({
            tool_calls: [{ index: k, id: event.id, type: 'function', function: { name: event.name, arguments: '' } }],
          }),
        );
        return out;
      }
      case 'tool-call-delta': {
        const k = toolOrdinals.get(event.index);
        if (k !== undefined && event.delta)
          out.push(chunk({ tool_calls: [{ index: k, function: { arguments: event.delta } }] }));
        return out;
      }
      case 'usage':
        usage = mergeUsage(usage, event.usage);
        return out;
      case 'finish': {
        usage = mergeUsage(usage, event.usage);
        out.push(chunk({}, toChatFinishReason(event.finishReason)));
        if (opts.includeUsage) out.push(formatSse({ ...envelope([]), usage: toChatUsage(usage) }));
        out.push(formatSse('[DONE]'));
        return out;
      }
      default: {
        const exhaustive: never = event;
        throw new Error(`unknown stream event ${JSON.stringify(exhaustive)}`);
      }
    }
  };

  return encoderLifecycle(encode, () => [
    chatErrorEvent({ code: 'stream_truncated', message: 'the stream ended before the completion was complete' }),
  ]);
}

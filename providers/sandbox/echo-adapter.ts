import { mintId } from '../../translators/common/ids.ts';
import type { CanonicalResponse, StreamEvent } from '../../translators/canonical/index.ts';
import type { LlmAdapter, LlmCall } from '../types.ts';
import { echoInputTokens, runEcho, streamPieces, type EchoResult } from './echo-model.ts';

function toResponse(call: LlmCall, result: EchoResult, id: string, toolCallId: string): CanonicalResponse {
  return {
    id,
    model: call.model.id,
    created: Math.floor(Date.now() / 1000),
    content:
      result.kind === 'tool-call'
        ? [{ type: 'tool-call', id: toolCallId, name: result.toolName ?? '', arguments: result.text }]
        : result.text
          ? [{ type: 'text', text: result.text }]
          : [],
    finishReason: result.finishReason,
    stopSequence: result.stopSequence,
    usage: result.usage,
  };
}

function* events(call: LlmCall, result: EchoResult, id: string, toolCallId: string): Generator<StreamEvent> {
  yield {
    type: 'message-start',
    id,
    model: call.model.id,
    created: Math.floor(Date.now() / 1000),
    usage: { inputTokens: result.usage.inputTokens },
  };
  if (result.kind === 'tool-call') {
    yield { type: 'tool-call-start', index: 0, id: toolCallId, name: result.toolName ?? '' };
    // Arguments arrive in two pieces, like a real model's, so clients exercise their accumulation.
    const half = Math.ceil(result.text.length / 2);
    yield { type: 'tool-call-delta', index: 0, delta: result.text.slice(0, half) };
    yield { type: 'tool-call-delta', index: 0, delta: result.text.slice(half) };
    yield { type: 'tool-call-end', index: 0 };
  } else if (result.text) {
    yield { type: 'text-start', index: 0 };
    for (const piece of streamPieces(result.text)) yield { type: 'text-delta', index: 0, delta: piece };
    yield { type: 'text-end', index: 0 };
  }
  yield { type: 'finish', finishReason: result.finishReason, stopSequence: result.stopSequence, usage: result.usage };
}

/** The offline LLM: no network, no delay before the first event. */
export const echoAdapter: LlmAdapter = {
  async generate(call) {
    const result = runEcho(call.request);
    return { response: toResponse(call, result, mintId('msg_'), mintId('call_')), warnings: [] };
  },
  async stream(call) {
    const iterator = events(call, runEcho(call.request), mintId('msg_'), mintId('call_'));
    const stream = new ReadableStream<StreamEvent>({
      pull(controller) {
        const next = iterator.next();
        if (next.done) controller.close();
        else controller.enqueue(next.value);
      },
    });
    return { kind: 'canonical', events: stream, warnings: [] };
  },
  async countTokens(call) {
    return { inputTokens: echoInputTokens(call.request), warnings: [] };
  },
};

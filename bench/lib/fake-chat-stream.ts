/**
 * The chat completions the zero-latency fake upstream answers (bench/lib/fake-openai-upstream.ts),
 * as text, so an in-process benchmark (bench/stream-pipeline.ts) replays exactly the stream the
 * fake sends over HTTP.
 */
export const CREATED = 1_700_000_000;

export const words =
  'The quick brown fox jumps over the lazy dog while the gateway relays every single token to the client without any delay'.split(
    ' ',
  );
export const usage = (completion: number) => ({
  prompt_tokens: 12,
  completion_tokens: completion,
  total_tokens: 12 + completion,
});

const chunk = (model: string, choices: unknown[], extra: Record<string, unknown> = {}) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-bench0001', object: 'chat.completion.chunk', created: CREATED, model, system_fingerprint: 'fp_bench', choices, ...extra })}\n\n`;

/** A stream's SSE events: the role chunk, `deltas` content deltas, then finish, usage and `[DONE]`. */
export function streamEvents(model: string, deltas: number): { first: string; deltas: string[]; tail: string[] } {
  return {
    first: chunk(model, [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }]),
    deltas: Array.from({ length: deltas }, (_, i) =>
      chunk(model, [
        { index: 0, delta: { content: (i ? ' ' : '') + words[i % words.length] }, logprobs: null, finish_reason: null },
      ]),
    ),
    tail: [
      chunk(model, [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }]),
      chunk(model, [], { usage: usage(deltas) }),
      'data: [DONE]\n\n',
    ],
  };
}

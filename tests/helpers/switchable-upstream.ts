/**
 * An OpenAI chat-completions upstream whose behaviour a test switches at will: answer normally,
 * fail with a given status, or stall mid-stream. Real HTTP on loopback; each request is counted.
 * Answers name the upstream model it was asked for, and report fixed usage.
 * @see https://platform.openai.com/docs/api-reference/chat/create
 */
/**
 * `sse-error`: a stream that answers 200 and then an error event at once (non-streamed: 500).
 * `too-large`: OpenAI's 429 for one request above the organisation's tokens per minute.
 */
export type Behaviour = 'ok' | 'stall' | 'sse-error' | 'too-large' | number;

export const SWITCHABLE_USAGE = { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 };

export interface SwitchableUpstream {
  baseUrl: string;
  behaviour: Behaviour;
  /** Requests received so far, with the upstream model each asked for. */
  requests: Array<{ model: string; stream: boolean }>;
  count(model?: string): number;
  stop(): void;
}

const enc = new TextEncoder();

export function startSwitchableUpstream(name: string): SwitchableUpstream {
  const state: SwitchableUpstream = {
    baseUrl: '',
    behaviour: 'ok',
    requests: [],
    count: (model) => state.requests.filter((r) => model === undefined || r.model === model).length,
    stop: () => server.stop(true),
  };
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    idleTimeout: 0,
    async fetch(req) {
      const body = (await req.json()) as { model: string; stream?: boolean };
      state.requests.push({ model: body.model, stream: Boolean(body.stream) });
      const behaviour = state.behaviour;
      if (typeof behaviour === 'number')
        return Response.json(
          { error: { message: `${name} says ${behaviour}`, type: 'test_error', param: null, code: null } },
          // A 429 says when to come back, as OpenAI's do.
          { status: behaviour, headers: behaviour === 429 ? { 'retry-after': '7' } : {} },
        );
      if (behaviour === 'too-large')
        return Response.json(
          {
            error: {
              message: `Request too large for ${body.model} in organization org-test on tokens per min (TPM): Limit 30000, Requested 50000. The input or output tokens must be reduced in order to run successfully.`,
              type: 'tokens',
              param: null,
              code: 'rate_limit_exceeded',
            },
          },
          { status: 429, headers: { 'retry-after': '1' } },
        );
      if (behaviour === 'sse-error') {
        const overloaded = {
          error: { message: `${name} is overloaded`, type: 'server_error', param: null, code: null },
        };
        if (!body.stream) return Response.json(overloaded, { status: 500 });
        return new Response(`data: ${JSON.stringify(overloaded)}\n\n`, {
          headers: { 'content-type': 'text/event-stream' },
        });
      }
      const text = `hello from ${name}`;
      const id = `chatcmpl-${name}`;
      if (!body.stream)
        return Response.json({
          id,
          object: 'chat.completion',
          created: 1,
          model: body.model,
          choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
          usage: SWITCHABLE_USAGE,
        });
      const chunk = (delta: object, finish: string | null, usage?: object) =>
        `data: ${JSON.stringify({
          id,
          object: 'chat.completion.chunk',
          created: 1,
          model: body.model,
          choices: usage ? [] : [{ index: 0, delta, finish_reason: finish }],
          ...(usage ? { usage } : {}),
        })}\n\n`;
      const stall = behaviour === 'stall';
      const stream = new ReadableStream<Uint8Array>({
        async start(controller) {
          controller.enqueue(enc.encode(chunk({ role: 'assistant', content: '' }, null)));
          controller.enqueue(enc.encode(chunk({ content: 'hello' }, null)));
          if (stall) return; // nothing more, connection left open
          controller.enqueue(enc.encode(chunk({ content: ` from ${name}` }, null)));
          controller.enqueue(enc.encode(chunk({}, 'stop')));
          controller.enqueue(enc.encode(chunk({}, null, SWITCHABLE_USAGE)));
          controller.enqueue(enc.encode('data: [DONE]\n\n'));
          controller.close();
        },
      });
      return new Response(stream, { headers: { 'content-type': 'text/event-stream' } });
    },
  });
  state.baseUrl = `http://127.0.0.1:${server.port}/v1`;
  return state;
}

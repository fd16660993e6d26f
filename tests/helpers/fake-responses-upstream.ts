/**
 * A fake upstream speaking the OpenAI Responses API (`POST /v1/responses`) on loopback, the
 * sibling of fake-llm-upstream.ts (same scenarios, chosen by the upstream model `up-<scenario>`,
 * same sentence, same usage figures) with the Responses wire shapes of the real service: every
 * SSE event named by `event:` and carrying its `type` and `sequence_number`, lifecycle events
 * carrying the whole response object, text in `message` items, function calls as items whose
 * arguments stream as deltas, usage only on the terminal event.
 *
 * When the request sets `reasoning`, the answer starts with a reasoning item (and its summary
 * events), which only a Responses client passed straight through can see. Every request is
 * recorded so tests can assert what the gateway sent.
 *
 * Shapes follow the openai SDK's `resources/responses/responses.d.ts` and
 * @see https://platform.openai.com/docs/api-reference/responses-streaming
 */
import {
  FAKE_INPUT_TOKENS,
  SLOW_HEADERS_MS,
  SLOW_STREAM_INTERVAL_MS,
  TEXT_DELTAS,
  TOOL_ARGS,
  scenarioOf,
  upstreamModelEcho,
  type Scenario,
} from './fake-llm-upstream.ts';
import {
  type Emit,
  type RecordedBase,
  type RecordingServer,
  scriptedSse,
  startRecordingServer,
} from './fake-upstream-server.ts';

export type ResponsesRecord = RecordedBase;

export interface FakeResponsesUpstream extends RecordingServer<ResponsesRecord> {
  apiKey: string;
}

/** The reasoning summary of a request that set `reasoning`. */
export const REASONING_SUMMARY = ['Thinking', ' about', ' foxes.'];
const now = () => Date.now();
const randomId = (n: number) =>
  [...crypto.getRandomValues(new Uint8Array(n))].map((b) => 'abcdef0123456789'[b % 16]).join('');

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
    readonly code: string | null = null,
  ) {
    super(message);
  }
}

function errorResponse(status: number, message: string, param: string | null = null, code: string | null = null) {
  const type = status === 429 ? 'requests' : status >= 500 ? 'server_error' : 'invalid_request_error';
  return Response.json({ error: { message, type, param, code } }, { status });
}

type Block = { kind: 'text'; deltas: string[] } | { kind: 'tool'; callId: string; name: string; pieces: string[] };
interface Plan {
  blocks: Block[];
  incomplete: boolean;
  outputTokens: number;
  reasoning: boolean;
  /** `web_search_call` items ahead of the answer: two when the request enables a web search tool. */
  searches: number;
  breakAfter?: number;
}

/** Checks the request as strictly as the real API on what a translator can get wrong. */
function read(body: any): { maxTokens?: number; toolNames: string[]; toolResults: string[] } {
  if (!body || typeof body !== 'object') throw new HttpError(400, 'We could not parse the JSON body of your request.');
  if (typeof body.model !== 'string' || !body.model)
    throw new HttpError(400, 'Missing required parameter: model.', 'model');
  if (body.store !== false) throw new HttpError(400, 'this fake only serves store: false', 'store');
  if (body.previous_response_id != null)
    throw new HttpError(
      404,
      `Previous response with id '${body.previous_response_id}' not found.`,
      'previous_response_id',
    );
  if (body.max_output_tokens != null && !(Number.isInteger(body.max_output_tokens) && body.max_output_tokens >= 16))
    throw new HttpError(400, "Invalid 'max_output_tokens': integer below minimum value.", 'max_output_tokens');
  const input: any[] = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : body.input;
  if (!Array.isArray(input) || input.length === 0) throw new HttpError(400, "Invalid 'input': empty.", 'input');
  const calls = new Set<string>();
  input.forEach((item, i) => {
    const type = item?.type ?? 'message';
    // As the real API does under store: false: an item id names a stored item, and nothing is stored.
    if (item?.id !== undefined)
      throw new HttpError(
        400,
        `Item with id '${item.id}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`,
        'input',
      );
    if (type === 'message') {
      if (!['user', 'system', 'developer', 'assistant'].includes(item.role))
        throw new HttpError(400, `Invalid value for 'input[${i}].role'.`, `input[${i}].role`);
      if (typeof item.content !== 'string' && !Array.isArray(item.content))
        throw new HttpError(400, `Invalid 'input[${i}].content'.`, `input[${i}].content`);
      for (const [j, part] of (Array.isArray(item.content) ? item.content : []).entries()) {
        if (!['input_text', 'input_image', 'input_file', 'output_text', 'refusal'].includes(part?.type))
          throw new HttpError(400, `Invalid value: '${part?.type}'.`, `input[${i}].content[${j}].type`);
      }
    } else if (type === 'function_call') {
      if (typeof item.call_id !== 'string' || typeof item.name !== 'string' || typeof item.arguments !== 'string')
        throw new HttpError(400, `Invalid 'input[${i}]': function_call needs call_id, name and arguments.`);
      calls.add(item.call_id);
    } else if (type === 'function_call_output') {
      if (!calls.has(item.call_id))
        throw new HttpError(
          400,
          `No tool call found for function call output with call_id ${item.call_id}.`,
          `input[${i}]`,
        );
    } else if (type !== 'reasoning') {
      throw new HttpError(400, `Invalid value: '${type}'.`, `input[${i}].type`);
    }
  });
  const trailing: string[] = [];
  for (let i = input.length - 1; i >= 0 && input[i]?.type === 'function_call_output'; i--)
    trailing.unshift(typeof input[i].output === 'string' ? input[i].output : JSON.stringify(input[i].output));
  return {
    maxTokens: body.max_output_tokens ?? undefined,
    toolNames: Array.isArray(body.tools)
      ? body.tools.filter((t: any) => t?.type === 'function').map((t: any) => t.name)
      : [],
    toolResults: trailing,
  };
}

function plan(scenario: Scenario, body: any): Plan {
  const req = read(body);
  const reasoning = body.reasoning != null;
  const searching =
    scenario === 'web-search' &&
    Array.isArray(body.tools) &&
    body.tools.some((t: any) => String(t?.type).startsWith('web_search'));
  const searches = searching ? 2 : 0;
  if (scenario === 'tools' && req.toolNames.length && !req.toolResults.length) {
    const blocks: Block[] = TOOL_ARGS.map((args, i) => {
      const json = JSON.stringify(args);
      const split = json.indexOf(':');
      return {
        kind: 'tool',
        callId: `call_${randomId(24)}`,
        name: req.toolNames[i] ?? req.toolNames[0]!,
        pieces: [json.slice(0, split), json.slice(split, -2), json.slice(-2)],
      };
    });
    return { blocks, incomplete: false, outputTokens: 6, reasoning, searches };
  }
  const deltas =
    scenario === 'tools'
      ? `Results: ${req.toolResults.join(' | ')}`.split(/(?= )/)
      : scenario === 'slow-stream'
        ? Array.from({ length: 25 }, () => TEXT_DELTAS).flat()
        : TEXT_DELTAS;
  const incomplete = req.maxTokens !== undefined && deltas.length > req.maxTokens;
  const kept = incomplete ? deltas.slice(0, req.maxTokens) : deltas;
  const breaks = scenario === 'error-event' || scenario === 'garbage' || scenario === 'cut';
  return {
    blocks: [{ kind: 'text', deltas: kept }],
    incomplete,
    outputTokens: kept.length,
    reasoning,
    searches,
    ...(breaks ? { breakAfter: 3 } : {}),
  };
}

/** Fresh item ids for a plan's output items: `rs_…`, `msg_…`, `fc_…`. */
function itemIds(p: Plan): string[] {
  const kinds = [
    ...(p.reasoning ? ['rs'] : []),
    ...Array.from({ length: p.searches }, () => 'ws'),
    ...p.blocks.map((b) => (b.kind === 'tool' ? 'fc' : 'msg')),
  ];
  return kinds.map((prefix) => `${prefix}_${randomId(32)}`);
}

/** The output items of a plan, finished. */
function outputItems(p: Plan, ids: string[]): any[] {
  const items: any[] = [];
  if (p.reasoning)
    items.push({
      id: ids[0],
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: REASONING_SUMMARY.join('') }],
    });
  const first = p.reasoning ? 1 : 0;
  for (let i = 0; i < p.searches; i++)
    items.push({
      id: ids[first + i],
      type: 'web_search_call',
      status: 'completed',
      action: { type: 'search', query: 'grass colour' },
    });
  p.blocks.forEach((b, i) => {
    const id = ids[i + first + p.searches];
    if (b.kind === 'text')
      items.push({
        id,
        type: 'message',
        status: p.incomplete ? 'incomplete' : 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: b.deltas.join(''), annotations: [], logprobs: [] }],
      });
    else
      items.push({
        id,
        type: 'function_call',
        status: 'completed',
        call_id: b.callId,
        name: b.name,
        arguments: b.pieces.join(''),
      });
  });
  return items;
}

function responseObject(body: any, id: string, status: string, output: any[], p?: Plan): any {
  const done = status !== 'in_progress';
  return {
    id,
    object: 'response',
    created_at: Math.floor(now() / 1000),
    status,
    background: false,
    error: null,
    incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: upstreamModelEcho(body.model),
    output,
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: body.reasoning?.effort ?? null, summary: null },
    service_tier: 'default',
    store: false,
    temperature: 1,
    text: { format: { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_p: 1,
    truncation: 'disabled',
    usage:
      done && p
        ? {
            input_tokens: FAKE_INPUT_TOKENS,
            input_tokens_details: { cached_tokens: 0 },
            output_tokens: p.outputTokens,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: FAKE_INPUT_TOKENS + p.outputTokens,
          }
        : null,
    user: null,
    metadata: body.metadata ?? {},
    // Not in any SDK type: a field the gateway cannot know, which a passed-through client still sees.
    x_fake_upstream: { region: 'test-1' },
  };
}

function events(body: any, p: Plan): Emit[] {
  let seq = 0;
  const ev = (type: string, data: object, content = false): Emit => ({
    text: `event: ${type}\ndata: ${JSON.stringify({ type, ...data, sequence_number: seq++ })}\n\n`,
    content,
  });
  const id = `resp_${randomId(32)}`;
  const final = outputItems(p, itemIds(p));
  const out: Emit[] = [
    ev('response.created', { response: responseObject(body, id, 'in_progress', []) }),
    ev('response.in_progress', { response: responseObject(body, id, 'in_progress', []) }),
  ];
  let index = 0;
  if (p.reasoning) {
    const item = final[0];
    out.push(ev('response.output_item.added', { output_index: 0, item: { ...item, summary: [] } }));
    out.push(
      ev('response.reasoning_summary_part.added', {
        item_id: item.id,
        output_index: 0,
        summary_index: 0,
        part: { type: 'summary_text', text: '' },
      }),
    );
    for (const delta of REASONING_SUMMARY)
      out.push(
        ev('response.reasoning_summary_text.delta', { item_id: item.id, output_index: 0, summary_index: 0, delta }),
      );
    out.push(
      ev('response.reasoning_summary_text.done', {
        item_id: item.id,
        output_index: 0,
        summary_index: 0,
        text: REASONING_SUMMARY.join(''),
      }),
    );
    out.push(ev('response.output_item.done', { output_index: 0, item }));
    index = 1;
  }
  for (let i = 0; i < p.searches; i++, index++) {
    const item = final[index];
    out.push(ev('response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress' } }));
    out.push(ev('response.web_search_call.in_progress', { item_id: item.id, output_index: index }));
    out.push(ev('response.web_search_call.completed', { item_id: item.id, output_index: index }));
    out.push(ev('response.output_item.done', { output_index: index, item }));
  }
  for (const [k, b] of p.blocks.entries()) {
    const output_index = index + k;
    const item = final[output_index];
    if (b.kind === 'text') {
      out.push(
        ev('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } }),
      );
      const part = { type: 'output_text', text: '', annotations: [], logprobs: [] };
      out.push(ev('response.content_part.added', { item_id: item.id, output_index, content_index: 0, part }));
      for (const delta of b.deltas)
        out.push(
          ev(
            'response.output_text.delta',
            { item_id: item.id, output_index, content_index: 0, delta, logprobs: [] },
            true,
          ),
        );
      const text = b.deltas.join('');
      out.push(
        ev('response.output_text.done', { item_id: item.id, output_index, content_index: 0, text, logprobs: [] }),
      );
      out.push(
        ev('response.content_part.done', { item_id: item.id, output_index, content_index: 0, part: { ...part, text } }),
      );
    } else {
      out.push(
        ev('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', arguments: '' } }),
      );
      for (const delta of b.pieces)
        out.push(ev('response.function_call_arguments.delta', { item_id: item.id, output_index, delta }, true));
      out.push(
        ev('response.function_call_arguments.done', { item_id: item.id, output_index, arguments: b.pieces.join('') }),
      );
    }
    out.push(ev('response.output_item.done', { output_index, item }));
  }
  const status = p.incomplete ? 'incomplete' : 'completed';
  out.push(ev(`response.${status}`, { response: responseObject(body, id, status, final, p) }));
  // What the real API sends when it fails mid-way: `error`, then `response.failed`.
  const failure = [
    ev('error', {
      code: 'server_error',
      message: 'The server had an error while processing your request.',
      param: null,
    }),
    ev('response.failed', {
      response: {
        ...responseObject(body, id, 'failed', []),
        error: { code: 'server_error', message: 'The server had an error.' },
      },
    }),
  ];
  return p.breakAfter === undefined ? out : [...out, { text: failure.map((f) => f.text).join('') }];
}

/** A truncated event, then an HTML error page as data: what a broken proxy might inject. */
const GARBAGE =
  'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"x\n\nevent: response.output_text.delta\ndata: <html><body>502 Bad Gateway</body></html>\n\n';

export async function startFakeResponsesUpstream(opts: { apiKey?: string } = {}): Promise<FakeResponsesUpstream> {
  const apiKey = opts.apiKey ?? 'fake-responses-key';

  const handle = async (req: Request, rec: ResponsesRecord): Promise<Response> => {
    if (req.method !== 'POST' || rec.path !== '/v1/responses')
      return errorResponse(404, `Unknown request URL: ${req.method} ${rec.path}`);
    if (rec.headers.authorization !== `Bearer ${apiKey}`)
      return errorResponse(401, 'Incorrect API key provided.', null, 'invalid_api_key');
    const scenario = rec.scenario;
    if (!scenario)
      return errorResponse(404, `The model '${String(rec.body?.model)}' does not exist.`, 'model', 'model_not_found');
    let p: Plan;
    try {
      p = plan(scenario, rec.body);
    } catch (err) {
      if (err instanceof HttpError) return errorResponse(err.status, err.message, err.param, err.code);
      throw err;
    }
    if (scenario === 'always-500') return errorResponse(500, 'The server had an error while processing your request.');
    if (scenario === 'flaky-429' && rec.attempt % 2 === 1)
      return errorResponse(429, 'Rate limit reached for requests.', null, 'rate_limit_exceeded');
    if (scenario === 'slow-headers') {
      await Bun.sleep(SLOW_HEADERS_MS);
      if (req.signal.aborted) {
        rec.abortedAt ??= now();
        return new Response(null, { status: 499 });
      }
    }
    if (rec.body.stream === true) {
      const list = events(rec.body, p);
      // With a failure planned, the list ends with the error event that scenario sends.
      const failure = p.breakAfter === undefined ? undefined : list.pop();
      return scriptedSse(rec, req, list, {
        scenario,
        breakAfter: p.breakAfter,
        errorEvent: failure?.text ?? '',
        garbage: GARBAGE,
        headers: {},
        slowIntervalMs: SLOW_STREAM_INTERVAL_MS,
      });
    }
    if (scenario === 'error-event') return errorResponse(500, 'The server had an error while processing your request.');
    if (scenario === 'garbage')
      return new Response('<html><body>502 Bad Gateway</body></html>', {
        headers: { 'content-type': 'application/json' },
      });
    const status = p.incomplete ? 'incomplete' : 'completed';
    return Response.json(responseObject(rec.body, `resp_${randomId(32)}`, status, outputItems(p, itemIds(p)), p));
  };

  const server = startRecordingServer<ResponsesRecord>({
    conversationOf: (body) => body?.input,
    scenarioOf: (body) => scenarioOf((body as { model?: unknown } | undefined)?.model),
    record: (base) => base,
    handle,
  });
  return { apiKey, ...server };
}

/**
 * The two non-generation endpoints of the fake LLM upstreams (fake-llm-upstream.ts), with the
 * real services' shapes:
 * - Anthropic `POST /v1/messages/count_tokens` → `{input_tokens}`; like the real API it refuses
 *   generation fields (`max_tokens`, `stream`…) as extra inputs.
 * - OpenAI `POST /v1/embeddings` → `{object: 'list', data: [{object, index, embedding}], model, usage}`,
 *   floats or base64 float32 as asked.
 * The scenario (upstream model) `always-500` fails, `garbage` answers a 200 that is no answer.
 * @see https://docs.anthropic.com/en/api/messages-count-tokens
 * @see https://platform.openai.com/docs/api-reference/embeddings/create
 */

/** What the fake count_tokens answers: a figure no gateway-side count would produce. */
export const FAKE_COUNT_TOKENS = 4321;
/** Prompt tokens the fake embeddings endpoint reports per input. */
export const FAKE_EMBED_TOKENS_PER_INPUT = 1111;
/** Vector size when the request gives no `dimensions`. */
export const FAKE_EMBED_DIMENSIONS = 6;

const COUNT_TOKENS_FIELDS = new Set([
  'model',
  'messages',
  'system',
  'tools',
  'tool_choice',
  'thinking',
  'output_config',
  'cache_control',
  'mcp_servers',
]);

/** The fake's vector for input `i`: exact in float32, so tests can compare what reached the client. */
export function fakeVector(i: number, dimensions: number): number[] {
  return Array.from({ length: dimensions }, (_, j) => (i + 1) * 0.25 - j * 0.125);
}

export type ErrorFor = (status: number, message: string, param?: string | null) => Response;

export function fakeCountTokens(body: any, scenario: string | undefined, errorFor: ErrorFor): Response {
  if (scenario === 'always-500') return errorFor(500, 'Internal server error');
  for (const key of Object.keys(body ?? {}))
    if (!COUNT_TOKENS_FIELDS.has(key)) return errorFor(400, `${key}: Extra inputs are not permitted`);
  if (!Array.isArray(body?.messages)) return errorFor(400, 'messages: Field required');
  if (scenario === 'garbage') return Response.json({ tokens: 'many' });
  return Response.json({ input_tokens: FAKE_COUNT_TOKENS });
}

export function fakeEmbeddings(body: any, scenario: string | undefined, errorFor: ErrorFor): Response {
  if (scenario === 'always-500') return errorFor(500, 'The server had an error while processing your request.');
  const input = body?.input;
  const inputs: unknown[] = typeof input === 'string' ? [input] : Array.isArray(input) ? input : [];
  if (inputs.length === 0) return errorFor(400, "'$.input' is invalid.", 'input');
  if (body.encoding_format !== undefined && body.encoding_format !== 'float' && body.encoding_format !== 'base64')
    return errorFor(400, 'encoding_format: invalid', 'encoding_format');
  const dimensions = body.dimensions ?? FAKE_EMBED_DIMENSIONS;
  if (scenario === 'garbage') return Response.json({ object: 'list', data: [{ index: 0, embedding: 'not floats!' }] });
  const encode = (v: number[]) =>
    body.encoding_format === 'base64' ? Buffer.from(new Float32Array(v).buffer).toString('base64') : v;
  const tokens = FAKE_EMBED_TOKENS_PER_INPUT * inputs.length;
  return Response.json({
    object: 'list',
    // Servers may answer out of order; the index says which input each vector belongs to.
    data: inputs
      .map((_, index) => ({ object: 'embedding', index, embedding: encode(fakeVector(index, dimensions)) }))
      .reverse(),
    model: `${body.model}-v1`,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  });
}

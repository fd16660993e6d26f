import { afterAll, describe, expect, test } from 'bun:test';
import { UpstreamError } from '../../providers/common/upstream-error.ts';
import { createResponsesAdapter } from '../../providers/openai-responses/responses-adapter.ts';
import type { ProviderConfig } from '../../providers/config/config-schema.ts';
import type { LlmCall } from '../../providers/types.ts';

/**
 * A Responses upstream answering `status: "failed"` (providers/openai-responses/responses-adapter.ts):
 * a client of another format gets the upstream's error (502), never an answer ending "stop";
 * a Responses client, whose body was passed through, gets the response object as it is.
 */
const failed = {
  id: 'resp_failed_1',
  object: 'response',
  created_at: 1741476542,
  status: 'failed',
  error: { code: 'server_error', message: 'The model produced invalid content.' },
  incomplete_details: null,
  model: 'gpt-4.1',
  output: [],
  usage: { input_tokens: 9, output_tokens: 0, total_tokens: 9 },
};
const upstream = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => Response.json(failed) });
afterAll(() => upstream.stop(true));

const adapter = createResponsesAdapter({
  id: 'resp',
  kind: 'openai-responses',
  base_url: `http://127.0.0.1:${upstream.port}/v1`,
  api_key: 'k',
  max_retries: 0,
} as ProviderConfig);
const call = (wire?: LlmCall['wire']): LlmCall => ({
  request: { model: 'resp/gpt', stream: false, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] },
  model: { id: 'resp/gpt', upstreamModel: 'gpt-4.1' },
  signal: new AbortController().signal,
  wire,
});

describe('a failed Responses answer', () => {
  test('translated: the upstream error, with its message', async () => {
    const err = await adapter.generate(call()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamError);
    expect((err as UpstreamError).status).toBe(502);
    expect((err as UpstreamError).message).toContain('The model produced invalid content.');
  });

  test('passed through: the response object as the upstream sent it', async () => {
    const answer = await adapter.generate(call({ format: 'responses', body: { model: 'resp/gpt', input: 'hi' } }));
    expect(answer.wire).toEqual(failed);
  });
});

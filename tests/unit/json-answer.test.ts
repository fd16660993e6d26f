import { describe, expect, test } from 'bun:test';
import { anthropicMessagesFormat } from '../../src/llm/formats/anthropic-messages-format.ts';
import { chatCompletionsFormat } from '../../src/llm/formats/chat-completions-format.ts';
import type { ClientFormat, EncodeContext } from '../../src/llm/client-format.ts';
import { jsonAnswer } from '../../src/llm/json-answer.ts';
import { decodeAnthropicResponse } from '../../translators/anthropic-messages/decode-response.ts';
import { decodeChatResponse } from '../../translators/chat-completions/decode-response.ts';
import type { UpstreamStreamFormat } from '../../providers/types.ts';

/**
 * A non-streamed answer from an upstream of the client's own format is the upstream's body, model
 * renamed; when that body has no response id, it gets the id the call's record keeps.
 */
const FIXTURES = `${import.meta.dir}/../fixtures`;
const MODEL = 'acme/chat';

async function answer(
  format: ClientFormat,
  upstream: UpstreamStreamFormat,
  body: Record<string, unknown>,
  text = JSON.stringify(body),
) {
  const response =
    upstream === 'chat-completions' ? decodeChatResponse(body, MODEL) : decodeAnthropicResponse(body, MODEL);
  const request = { model: MODEL, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] };
  const ctx: EncodeContext = {
    id: `${format.idPrefix}gateway`,
    model: MODEL,
    created: 1,
    decoded: format.decode(request),
  };
  const out = jsonAnswer(format, { response, warnings: [], raw: { format: upstream, text } }, ctx);
  return { out, client: JSON.parse(out.text), recorded: response.id };
}

describe('a passed-through JSON answer', () => {
  for (const [format, upstream, fixture] of [
    [chatCompletionsFormat, 'chat-completions', 'chat-completions/response-text.json'],
    [anthropicMessagesFormat, 'anthropic-messages', 'anthropic-messages/response-text.json'],
  ] as const)
    test(`${format.name}: the upstream's id is kept; none, or an empty one, becomes the recorded id`, async () => {
      const body = (await Bun.file(`${FIXTURES}/${fixture}`).json()) as Record<string, unknown>;
      const own = await answer(format, upstream, body);
      expect(own.out.idFromUpstream).toBe(true);
      expect(own.out.warnings).toBeUndefined();
      expect(own.client.id).toBe(body.id);
      expect(own.recorded).toBe(body.id as string);
      const { id: _, ...withoutId } = body;
      for (const missing of [withoutId, { ...body, id: '' }]) {
        const filled = await answer(format, upstream, missing);
        expect(filled.client.id).toBe(filled.recorded);
        expect(filled.recorded).toStartWith(format.idPrefix);
        // The rest is the upstream's body, model renamed.
        expect({ ...filled.client, id: undefined }).toEqual({ ...missing, id: undefined, model: MODEL });
      }
    });
});

test('a same-format body the gateway cannot write again is answered as the gateway encodes it', async () => {
  // JSON.parse reads it; JSON.stringify, which filling in the missing id needs, throws.
  const { id: _, ...body } = (await Bun.file(`${FIXTURES}/chat-completions/response-text.json`).json()) as Record<
    string,
    unknown
  >;
  const text = JSON.stringify({ ...body, x: 0 }).replace('"x":0', `"x":${'['.repeat(200_000)}${']'.repeat(200_000)}`);
  const { out, client } = await answer(chatCompletionsFormat, 'chat-completions', JSON.parse(text), text);
  expect(out.idFromUpstream).toBe(false);
  // Lossy, so said: the client's x-gateway-warnings carries it.
  expect(out.warnings).toEqual([expect.objectContaining({ type: 'other' })]);
  expect(client.id).toBe('chatcmpl-gateway');
  expect(client.model).toBe(MODEL);
  expect(client.x).toBeUndefined();
});

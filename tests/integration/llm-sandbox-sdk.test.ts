import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { api, createAccount, uniqueEmail } from '../helpers/api.ts';
import { MODES, startGateway, type GatewayProcess } from '../helpers/gateway-process.ts';
import { rejection } from '../helpers/rejection.ts';

const tool = {
  type: 'function' as const,
  function: {
    name: 'lookup',
    description: 'Look something up',
    parameters: { type: 'object', properties: { input: { type: 'string' } } },
  },
};

/** Costs of sandbox/echo: $1 in / $2 out per million whitespace tokens. */
const cost = (input: number, output: number) => (input * 1 + output * 2) / 1_000_000;

for (const mode of MODES) {
  describe(`sandbox/echo through the official SDKs [${mode.name}]`, () => {
    let gw: GatewayProcess;
    let key: string;
    let openai: OpenAI;
    let anthropic: Anthropic;

    beforeAll(async () => {
      gw = await startGateway(await mode.env('llmsdk'));
      ({ key } = await createAccount(gw, uniqueEmail('llm'), 5));
      openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
      anthropic = new Anthropic({ baseURL: gw.url, apiKey: key, maxRetries: 0 });
    }, 30_000);
    afterAll(async () => {
      await gw?.stop();
    });

    test('chat completions: non-streamed answer, usage, gateway model id', async () => {
      const res = await openai.chat.completions.create({
        model: 'sandbox/echo',
        messages: [{ role: 'user', content: 'hello big world' }],
      });
      expect(res.object).toBe('chat.completion');
      expect(res.model).toBe('sandbox/echo');
      expect(res.id).toStartWith('chatcmpl-');
      expect(res.choices[0]?.message).toMatchObject({ role: 'assistant', content: 'echo: hello big world' });
      expect(res.choices[0]?.finish_reason).toBe('stop');
      expect(res.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
    });

    test('chat completions: streamed word by word, usage chunk on request, stream helper', async () => {
      const stream = await openai.chat.completions.create({
        model: 'sandbox/echo',
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: 'one two three' },
        ],
        stream: true,
        stream_options: { include_usage: true },
      });
      const deltas: string[] = [];
      let usage: OpenAI.CompletionUsage | null | undefined;
      let finish: string | null | undefined;
      for await (const chunk of stream) {
        expect(chunk.model).toBe('sandbox/echo');
        const choice = chunk.choices[0];
        if (choice?.delta.content) deltas.push(choice.delta.content);
        if (choice?.finish_reason) finish = choice.finish_reason;
        if (chunk.usage) usage = chunk.usage;
      }
      expect(deltas).toEqual(['echo:', ' one', ' two', ' three']);
      expect(finish).toBe('stop');
      expect(usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 });

      const helper = openai.chat.completions.stream({
        model: 'sandbox/echo',
        messages: [{ role: 'user', content: 'via helper' }],
      });
      const final = await helper.finalChatCompletion();
      expect(final.choices[0]?.message.content).toBe('echo: via helper');
    });

    test('chat completions: tool_choice required calls the tool; max_tokens and stop end early', async () => {
      const res = await openai.chat.completions.create({
        model: 'sandbox/echo',
        messages: [{ role: 'user', content: 'find cats' }],
        tools: [tool],
        tool_choice: 'required',
      });
      const call = res.choices[0]?.message.tool_calls?.[0];
      expect(res.choices[0]?.finish_reason).toBe('tool_calls');
      expect(call?.type).toBe('function');
      expect(call?.type === 'function' && call.function.name).toBe('lookup');
      expect(call?.type === 'function' && JSON.parse(call.function.arguments)).toEqual({ input: 'find cats' });

      const streamed = await openai.chat.completions
        .stream({
          model: 'sandbox/echo',
          messages: [{ role: 'user', content: 'find dogs' }],
          tools: [tool],
          tool_choice: { type: 'function', function: { name: 'lookup' } },
        })
        .finalChatCompletion();
      const streamedCall = streamed.choices[0]?.message.tool_calls?.[0];
      expect(streamedCall?.type === 'function' && JSON.parse(streamedCall.function.arguments)).toEqual({
        input: 'find dogs',
      });

      const short = await openai.chat.completions.create({
        model: 'sandbox/echo',
        messages: [{ role: 'user', content: 'a b c d' }],
        max_tokens: 2,
      });
      expect(short.choices[0]?.message.content).toBe('echo: a');
      expect(short.choices[0]?.finish_reason).toBe('length');
      const stopped = await openai.chat.completions.create({
        model: 'sandbox/echo',
        messages: [{ role: 'user', content: 'a b STOP c' }],
        stop: ['STOP'],
      });
      expect(stopped.choices[0]?.message.content).toBe('echo: a b ');
      expect(stopped.choices[0]?.finish_reason).toBe('stop');
    });

    test('responses: create, stream helper, previous_response_id, retrieve, store:false', async () => {
      const first = await openai.responses.create({
        model: 'sandbox/echo',
        input: 'remember me',
        instructions: 'be kind',
      });
      expect(first.object).toBe('response');
      expect(first.status).toBe('completed');
      expect(first.model).toBe('sandbox/echo');
      expect(first.output_text).toBe('echo: remember me');
      expect(first.usage?.input_tokens).toBe(4);

      const stream = openai.responses.stream({
        model: 'sandbox/echo',
        input: 'next turn',
        previous_response_id: first.id,
      });
      const types = new Set<string>();
      for await (const event of stream) types.add(event.type);
      const second = await stream.finalResponse();
      expect(second.output_text).toBe('echo: next turn');
      // The stored conversation came along: input counts both turns' words.
      expect(second.usage?.input_tokens).toBe(2 + 3 + 2);
      for (const t of [
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.content_part.added',
        'response.output_text.delta',
        'response.output_text.done',
        'response.content_part.done',
        'response.output_item.done',
        'response.completed',
      ]) {
        expect(types.has(t)).toBe(true);
      }

      const retrieved = await openai.responses.retrieve(second.id);
      expect(retrieved.output_text).toBe('echo: next turn');

      const unstored = await openai.responses.create({ model: 'sandbox/echo', input: 'forget me', store: false });
      expect(await rejection(openai.responses.retrieve(unstored.id))).toBeInstanceOf(OpenAI.NotFoundError);
      expect(
        await rejection(
          openai.responses.create({ model: 'sandbox/echo', input: 'x', previous_response_id: 'resp_doesnotexist' }),
        ),
      ).toBeInstanceOf(OpenAI.NotFoundError);
    });

    test('messages: create, stream().finalMessage(), tools, stop sequences, max_tokens', async () => {
      const res = await anthropic.messages.create({
        model: 'sandbox/echo',
        max_tokens: 100,
        messages: [{ role: 'user', content: 'hi there' }],
      });
      expect(res.type).toBe('message');
      expect(res.model).toBe('sandbox/echo');
      expect(res.content[0]).toMatchObject({ type: 'text', text: 'echo: hi there' });
      expect(res.stop_reason).toBe('end_turn');
      expect(res.usage).toMatchObject({ input_tokens: 2, output_tokens: 3 });

      const final = await anthropic.messages
        .stream({
          model: 'sandbox/echo',
          max_tokens: 100,
          system: 'short',
          messages: [{ role: 'user', content: 'stream this please' }],
        })
        .finalMessage();
      expect(final.content[0]).toMatchObject({ type: 'text', text: 'echo: stream this please' });
      expect(final.usage.output_tokens).toBe(4);
      expect(final.usage.input_tokens).toBe(4);

      const tooled = await anthropic.messages
        .stream({
          model: 'sandbox/echo',
          max_tokens: 100,
          messages: [{ role: 'user', content: 'weather in Paris' }],
          tools: [
            {
              name: 'weather',
              description: 'Weather',
              input_schema: { type: 'object', properties: { input: { type: 'string' } } },
            },
          ],
          tool_choice: { type: 'any' },
        })
        .finalMessage();
      expect(tooled.stop_reason).toBe('tool_use');
      expect(tooled.content[0]).toMatchObject({
        type: 'tool_use',
        name: 'weather',
        input: { input: 'weather in Paris' },
      });

      const stopped = await anthropic.messages.create({
        model: 'sandbox/echo',
        max_tokens: 100,
        stop_sequences: ['END'],
        messages: [{ role: 'user', content: 'go END now' }],
      });
      expect(stopped.stop_reason).toBe('stop_sequence');
      expect(stopped.stop_sequence).toBe('END');
      expect(stopped.content[0]).toMatchObject({ type: 'text', text: 'echo: go ' });
      const capped = await anthropic.messages.create({
        model: 'sandbox/echo',
        max_tokens: 1,
        messages: [{ role: 'user', content: 'many words here' }],
      });
      expect(capped.stop_reason).toBe('max_tokens');
      expect(capped.content[0]).toMatchObject({ type: 'text', text: 'echo:' });
    });

    test("errors arrive in each format's own shape, raising the SDKs' own classes", async () => {
      const badOpenAI = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'gw_wrong', maxRetries: 0 });
      expect(
        await rejection(
          badOpenAI.chat.completions.create({ model: 'sandbox/echo', messages: [{ role: 'user', content: 'x' }] }),
        ),
      ).toBeInstanceOf(OpenAI.AuthenticationError);
      const badAnthropic = new Anthropic({ baseURL: gw.url, apiKey: 'gw_wrong', maxRetries: 0 });
      expect(
        await rejection(
          badAnthropic.messages.create({
            model: 'sandbox/echo',
            max_tokens: 5,
            messages: [{ role: 'user', content: 'x' }],
          }),
        ),
      ).toBeInstanceOf(Anthropic.AuthenticationError);

      expect(
        await rejection(
          openai.chat.completions.create({ model: 'nope/model', messages: [{ role: 'user', content: 'x' }] }),
        ),
      ).toBeInstanceOf(OpenAI.NotFoundError);
      expect(
        await rejection(
          anthropic.messages.create({ model: 'nope/model', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }),
        ),
      ).toBeInstanceOf(Anthropic.NotFoundError);

      const temp = await api(gw, 'POST', '/v1/chat/completions', {
        key,
        body: { model: 'sandbox/echo', messages: [{ role: 'user', content: 'x' }], temperature: 3 },
      });
      expect(temp.status).toBe(400);
      expect(temp.body.error.type).toBe('invalid_request_error');
      expect(temp.body.error.param).toBe('temperature');
      const stops = await api(gw, 'POST', '/v1/chat/completions', {
        key,
        body: { model: 'sandbox/echo', messages: [{ role: 'user', content: 'x' }], stop: ['a', 'b', 'c', 'd', 'e'] },
      });
      expect(stops.status).toBe(400);
      expect(stops.body.error.param).toBe('stop');
      const anthropicTemp = await api(gw, 'POST', '/v1/messages', {
        key,
        body: { model: 'sandbox/echo', max_tokens: 5, temperature: 1.5, messages: [{ role: 'user', content: 'x' }] },
      });
      expect(anthropicTemp.status).toBe(400);
      expect(anthropicTemp.body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
      const noMax = await api(gw, 'POST', '/v1/messages', {
        key,
        body: { model: 'sandbox/echo', messages: [{ role: 'user', content: 'x' }] },
      });
      expect(noMax.status).toBe(400);
      expect(noMax.body.error.message).toContain('max_tokens');
      const both = await api(gw, 'POST', '/v1/messages', {
        key,
        body: {
          model: 'sandbox/echo',
          max_tokens: 5,
          temperature: 0.5,
          top_p: 0.5,
          messages: [{ role: 'user', content: 'x' }],
        },
      });
      expect(both.status).toBe(400);
      const badJson = await api(gw, 'POST', '/v1/messages', { key, rawBody: '{"model":' });
      expect(badJson.status).toBe(400);
      expect(badJson.body.type).toBe('error');
      const media = await api(gw, 'POST', '/v1/chat/completions', {
        key,
        body: { model: 'sandbox/image', messages: [{ role: 'user', content: 'x' }] },
      });
      expect(media.status).toBe(400);
      expect(media.body.error.param).toBe('model');
      // The Anthropic endpoint also takes the Bearer header, and the version header is accepted.
      const bearer = await api(gw, 'POST', '/v1/messages', {
        key,
        headers: { 'anthropic-version': '2023-06-01' },
        body: { model: 'sandbox/echo', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] },
      });
      expect(bearer.status).toBe(200);
    });

    test('every call is charged from its real usage, and no positive balance is refused before calling', async () => {
      const acct = await createAccount(gw, uniqueEmail('bill'), 1);
      const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: acct.key, maxRetries: 0 });
      await client.chat.completions.create({ model: 'sandbox/echo', messages: [{ role: 'user', content: 'a b c' }] }); // 3 in, 4 out
      const stream = await client.chat.completions.create({
        model: 'sandbox/echo',
        messages: [{ role: 'user', content: 'd e' }],
        stream: true,
      }); // 2 in, 3 out, no usage asked
      for await (const _ of stream) {
        // drain
      }
      const expected = 1 - cost(3, 4) - cost(2, 3);
      let balance = 0;
      for (let i = 0; i < 40; i++) {
        balance = (await api(gw, 'GET', '/v1/account', { key: acct.key })).body.data.balance_usd;
        if (Math.abs(balance - expected) < 1e-12) break;
        await Bun.sleep(25);
      }
      expect(balance).toBeCloseTo(expected, 10);

      const broke = await createAccount(gw, uniqueEmail('broke'), 0);
      const poor = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: broke.key, maxRetries: 0 });
      const err = await poor.chat.completions
        .create({ model: 'sandbox/echo', messages: [{ role: 'user', content: 'x' }] })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.APIError);
      expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
      const poorAnthropic = new Anthropic({ baseURL: gw.url, apiKey: broke.key, maxRetries: 0 });
      const aerr = await poorAnthropic.messages
        .create({ model: 'sandbox/echo', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })
        .catch((e: unknown) => e);
      expect((aerr as InstanceType<typeof Anthropic.APIError>).status).toBe(402);
    });
  });
}

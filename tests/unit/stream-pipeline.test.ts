import { describe, expect, test } from 'bun:test';
import { createParser } from 'eventsource-parser';
import type { LlmStream, UpstreamStreamFormat } from '../../providers/types.ts';
import { emptyUsage, type StreamEvent } from '../../translators/canonical/index.ts';
import { UpstreamError } from '../../providers/common/upstream-error.ts';
import { anthropicMessagesFormat } from '../../src/llm/formats/anthropic-messages-format.ts';
import { chatCompletionsFormat } from '../../src/llm/formats/chat-completions-format.ts';
import { responsesFormat } from '../../src/llm/formats/responses-format.ts';
import type { ClientFormat, EncodeContext } from '../../src/llm/client-format.ts';
import { awaitFirstEvent } from '../../src/llm/first-event.ts';
import { type StreamOutcome, OutcomeTap } from '../../src/llm/outcome-tap.ts';
import { clientStream } from '../../src/llm/stream-pipeline.ts';
import { upstreamEvents } from '../../src/llm/upstream-events.ts';
import { readFixture, replayBytes, SPLITS } from '../helpers/replay-sse.ts';

/**
 * The client stream from a chat upstream's bytes, through the first-event check and the pipeline
 * as the service runs them: the check's reads are decoded once and handed on (upstream-events.ts),
 * so whatever the reads' boundaries, the client gets the same bytes and the tap the same outcome.
 */
const FIXTURES = `${import.meta.dir}/../fixtures/chat-completions`;
const MODEL = 'acme/chat';
const body = { model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 16, stream: true };

function wire(bytes: Uint8Array, split: number[], upstream: UpstreamStreamFormat = 'chat-completions'): LlmStream {
  return { kind: 'wire', format: upstream, body: replayBytes(bytes, split), warnings: [] };
}

async function run(
  format: ClientFormat,
  bytes: Uint8Array,
  split: number[],
  upstream: UpstreamStreamFormat = 'chat-completions',
) {
  const clientBody =
    format === chatCompletionsFormat
      ? body
      : format === responsesFormat
        ? { model: MODEL, input: 'hi', stream: true }
        : { ...body, stream: true };
  const decoded = format.decode(clientBody);
  const ctx: EncodeContext = { id: `${format.idPrefix}test`, model: MODEL, created: 1, decoded };
  const outcomes: StreamOutcome[] = [];
  const tap = new OutcomeTap(
    MODEL,
    () => 3,
    (outcome) => {
      outcomes.push(outcome);
    },
  );
  const first = await awaitFirstEvent(wire(bytes, split, upstream), MODEL, 5_000);
  const stream = clientStream({ upstream: first, format, ctx, tap, abort: new AbortController() });
  return { text: await new Response(stream).text(), outcomes };
}

describe('the client stream after the first-event check', () => {
  for (const fixture of ['text.sse', 'parallel-tool-calls.sse', 'refusal.sse', 'length.sse', 'truncated.sse'])
    for (const format of [chatCompletionsFormat, anthropicMessagesFormat])
      test(`${fixture} to a ${format.name} client: the same bytes and outcome under every split`, async () => {
        const bytes = await readFixture(`${FIXTURES}/${fixture}`);
        const whole = await run(format, bytes, SPLITS.whole as number[]);
        expect(whole.outcomes).toHaveLength(1);
        expect(whole.text.length).toBeGreaterThan(0);
        for (const [name, split] of Object.entries(SPLITS)) {
          const cut = await run(format, bytes, split);
          expect({ name, text: cut.text }).toEqual({ name, text: whole.text });
          expect({ name, outcome: cut.outcomes[0]?.status }).toEqual({ name, outcome: whole.outcomes[0]?.status });
          expect(cut.outcomes[0]?.response?.usage).toEqual(whole.outcomes[0]?.response?.usage);
        }
      });

  for (const fixture of ['error-midstream.sse', 'garbage.sse'])
    test(`${fixture}: fails over when the fault is in the first event's read, else ends the client's stream`, async () => {
      const bytes = await readFixture(`${FIXTURES}/${fixture}`);
      const whole = await run(chatCompletionsFormat, bytes, SPLITS.whole as number[]).catch((e) => e);
      expect(whole).toBeInstanceOf(UpstreamError);
      for (const format of [chatCompletionsFormat, anthropicMessagesFormat]) {
        const { text, outcomes } = await run(format, bytes, SPLITS.byteByByte as number[]);
        expect(text).toMatch(/error/);
        expect(outcomes[0]?.status).toBe('failed');
        // Byte by byte and in primes the fault comes in a later read: the same client bytes either way.
        expect((await run(format, bytes, SPLITS.primes as number[])).text).toBe(text);
      }
    });

  /** A chat stream: "Hi", its finish_reason and usage chunk (1000 in, 500 out), then `ending`, all in one read or not. */
  const answeredThen = (ending: string) => {
    const chunk = (delta: object, finish: string | null = null, extra: object = {}) =>
      `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;
    const usage = { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 };
    return new TextEncoder().encode(
      chunk({ role: 'assistant', content: 'Hi' }) +
        chunk({}, 'stop') +
        `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage })}\n\n` +
        ending,
    );
  };

  test('an error after the usage, even in the same read, does not fail over: the answer is the client’s, charged its usage', async () => {
    const bytes = answeredThen('data: {"error":{"message":"boom","type":"server_error"}}\n\n');
    for (const split of Object.values(SPLITS)) {
      // Whole, it failed over: another deployment was asked again, and this one's work charged $0.
      const { text, outcomes } = await run(chatCompletionsFormat, bytes, split as number[]);
      expect(text).toContain('"content":"Hi"');
      expect(outcomes[0]?.status).toBe('failed');
      expect(outcomes[0]?.response?.usage).toMatchObject({ inputTokens: 1000, outputTokens: 500 });
      expect(outcomes[0]?.usageEstimated).toBe(false);
    }
  });

  /** One event of an Anthropic stream, as SSE. */
  const event = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const messageStart = (inputTokens: number) =>
    event('message_start', {
      message: {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        content: [],
        usage: { input_tokens: inputTokens, output_tokens: 1 },
      },
    });

  test('a built-in tool counted as it starts, then an error: still a failure at once, asked of the next deployment', async () => {
    const bytes = new TextEncoder().encode(
      messageStart(10) +
        event('content_block_start', {
          index: 0,
          content_block: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} },
        }) +
        event('error', { error: { type: 'overloaded_error', message: 'Overloaded' } }),
    );
    const failed = await run(anthropicMessagesFormat, bytes, SPLITS.whole as number[], 'anthropic-messages').catch(
      (e) => e,
    );
    expect(failed).toBeInstanceOf(UpstreamError);
  });

  test('an Anthropic stream cut after its message_delta is charged that usage, not an estimate, on every client format', async () => {
    const bytes = new TextEncoder().encode(
      messageStart(1000) +
        event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }) +
        event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Hi' } }) +
        event('content_block_stop', { index: 0 }) +
        event('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 500 } }),
      // ... and no message_stop.
    );
    for (const format of [chatCompletionsFormat, anthropicMessagesFormat, responsesFormat]) {
      const { outcomes } = await run(format, bytes, SPLITS.primes as number[], 'anthropic-messages');
      expect(outcomes[0]?.status).toBe('failed');
      // Its output was 1 token (two characters) before.
      expect(outcomes[0]?.response?.usage).toMatchObject({ inputTokens: 1000, outputTokens: 500 });
    }
  });

  test('a passed-through chat stream reaches the client as the upstream sent it, model renamed', async () => {
    const bytes = await readFixture(`${FIXTURES}/text.sse`);
    const { text } = await run(chatCompletionsFormat, bytes, SPLITS.primes as number[]);
    const upstream = new TextDecoder().decode(bytes);
    const contents = (s: string) => [...s.matchAll(/"content":"([^"]*)"/g)].map((m) => m[1]);
    expect(contents(text)).toEqual(contents(upstream));
    expect(text).toContain(`"model":"${MODEL}"`);
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });
});

describe('an upstream whose events span several data lines (legal SSE, pretty-printed JSON)', () => {
  /** Every `data:` line's JSON written over several `data:` lines, as some OpenAI-compatible servers do. */
  const multiline = (sse: string) =>
    sse.replaceAll(/^data: (\{.*\})$/gm, (_, json: string) =>
      JSON.stringify(JSON.parse(json), null, 1)
        .split('\n')
        .map((line) => `data: ${line}`)
        .join('\n'),
    );
  /** What a client's SSE parser reads: each event's data, parsed when it is JSON. */
  const clientEvents = (text: string) => {
    const events: unknown[] = [];
    const parser = createParser({
      onEvent: (e) => events.push(e.data === '[DONE]' ? e.data : { event: e.event, json: JSON.parse(e.data) }),
    });
    parser.feed(text);
    return events;
  };

  for (const [upstream, format, fixture] of [
    ['chat-completions', chatCompletionsFormat, `${FIXTURES}/text.sse`],
    ['anthropic-messages', anthropicMessagesFormat, `${FIXTURES}/../anthropic-messages/text.sse`],
    ['responses', responsesFormat, `${FIXTURES}/../responses/text.sse`],
  ] as const)
    test(`${upstream}, passed through: the client reads the same events as from single-line data`, async () => {
      const sse = new TextDecoder().decode(await readFixture(fixture));
      const spread = multiline(sse);
      expect(spread.split('\n').length).toBeGreaterThan(sse.split('\n').length * 2);
      const single = await run(format, new TextEncoder().encode(sse), SPLITS.whole as number[], upstream);
      for (const split of [SPLITS.whole, SPLITS.primes] as number[][]) {
        const { text, outcomes } = await run(format, new TextEncoder().encode(spread), split, upstream);
        expect(outcomes[0]?.status).toBe('completed');
        expect(clientEvents(text)).toEqual(clientEvents(single.text));
      }
    });
});

describe('a passed-through stream whose upstream sent no response id', () => {
  const ids = (text: string) => [...text.matchAll(/^data: (\{.*\})$/gm)].map((m) => JSON.parse(m[1] as string));

  test('chat: every chunk gets the id its record keeps, the rest byte for byte', async () => {
    const upstream = new TextDecoder().decode(await readFixture(`${FIXTURES}/text.sse`));
    const stripped = upstream.replaceAll(/"id":"chatcmpl-[^"]*",/g, '');
    expect(stripped).not.toContain('"id"');
    for (const split of [SPLITS.whole, SPLITS.primes] as number[][]) {
      const { text, outcomes } = await run(chatCompletionsFormat, new TextEncoder().encode(stripped), split);
      const recorded = outcomes[0]?.response?.id;
      expect(recorded).toStartWith('chatcmpl-');
      const chunks = ids(text);
      expect(chunks.length).toBeGreaterThan(2);
      for (const chunk of chunks) expect(chunk.id).toBe(recorded);
      // Nothing else moved: the same chunks as the upstream's own stream, id and model aside.
      const withOwn = await run(chatCompletionsFormat, await readFixture(`${FIXTURES}/text.sse`), split);
      expect(chunks.map(({ id: _, ...rest }) => rest)).toEqual(ids(withOwn.text).map(({ id: _, ...rest }) => rest));
    }
  });

  test('anthropic: an empty id in message_start becomes the one its record keeps', async () => {
    const upstream = new TextDecoder().decode(await readFixture(`${FIXTURES}/../anthropic-messages/text.sse`));
    const emptied = upstream.replace('"id":"msg_01TextFixture"', '"id":""');
    expect(emptied).not.toContain('msg_01TextFixture');
    const { text, outcomes } = await run(
      anthropicMessagesFormat,
      new TextEncoder().encode(emptied),
      SPLITS.primes as number[],
      'anthropic-messages',
    );
    const recorded = outcomes[0]?.response?.id;
    expect(recorded).toStartWith('msg_');
    expect(ids(text)[0]).toMatchObject({ type: 'message_start', message: { id: recorded } });
    // An upstream id of its own is kept as it is.
    const own = await run(
      anthropicMessagesFormat,
      new TextEncoder().encode(upstream),
      SPLITS.whole as number[],
      'anthropic-messages',
    );
    expect(ids(own.text)[0].message.id).toBe('msg_01TextFixture');
    expect(own.outcomes[0]?.response?.id).toBe('msg_01TextFixture');
  });
});

describe('an upstream event the gateway cannot pass on', () => {
  // JSON.parse reads it; JSON.stringify, which a repaired or filled-in chunk needs, throws.
  const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
  const chunk = (fields: string) => `data: {${fields},"object":"chat.completion.chunk","model":"m",`;
  const upstream = (first: string) =>
    new TextEncoder().encode(
      [
        `${first}"choices":[{"index":0,"delta":{"content":"hi"}}],"x":${deep}}\n\n`,
        `${chunk('"id":"c1"')}"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n`,
        `${chunk('"id":"c1"')}"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}\n\n`,
        'data: [DONE]\n\n',
      ].join(''),
    );

  for (const [name, first] of [
    ['a chunk the role repair rewrites', chunk('"id":"c1"')],
    ['a chunk without an id', chunk('"created":1')],
  ] as Array<[string, string]>)
    test(`${name}: the chat client's stream ends with its error event, and the call settles as failed`, async () => {
      const { text, outcomes } = await run(chatCompletionsFormat, upstream(first), SPLITS.whole as number[]);
      const events = text.split('\n\n').filter(Boolean);
      expect(JSON.parse((events.at(-1) as string).slice('data: '.length))).toMatchObject({
        error: { code: 'invalid_upstream_stream' },
      });
      expect(outcomes.map((o) => o.status)).toEqual(['failed']);
    });

  test('an encoder that throws mid-stream: the client still gets its error event and the call settles as failed', async () => {
    const events: StreamEvent[] = [
      { type: 'message-start', id: 'msg_1', model: MODEL, created: 1 },
      { type: 'text-start', index: 0 },
      { type: 'text-delta', index: 0, delta: 'hi' },
      { type: 'text-delta', index: 0, delta: 'there' },
      { type: 'text-end', index: 0 },
      { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: emptyUsage() },
    ];
    let delivered = 0;
    // The chat format, its encoder failing on the second delta (an event it cannot write).
    const format: ClientFormat = {
      ...chatCompletionsFormat,
      encoder(ctx) {
        const inner = chatCompletionsFormat.encoder(ctx);
        return {
          push(event) {
            if (event.type === 'text-delta' && ++delivered === 2)
              throw new RangeError('Maximum call stack size exceeded.');
            return inner.push(event);
          },
          end: () => inner.end(),
        };
      },
    };
    const decoded = format.decode(body);
    const ctx: EncodeContext = { id: 'chatcmpl-test', model: MODEL, created: 1, decoded };
    const outcomes: StreamOutcome[] = [];
    const tap = new OutcomeTap(
      MODEL,
      () => 3,
      (outcome) => {
        outcomes.push(outcome);
      },
    );
    const source = new ReadableStream<StreamEvent>({
      start(c) {
        for (const e of events) c.enqueue(e);
        c.close();
      },
    });
    const stream = clientStream({
      upstream: { kind: 'canonical', events: source, warnings: [] },
      format,
      ctx,
      tap,
      abort: new AbortController(),
    });
    const text = await new Response(stream).text();
    expect(text).toContain('"content":"hi"');
    expect(text).toContain('invalid_upstream_stream');
    expect(text).not.toContain('"finish_reason":"stop"');
    expect(outcomes.map((o) => o.status)).toEqual(['failed']);
  });

  test('translated for a Messages client, the same chunk is read for what it means and the call completes', async () => {
    const { text, outcomes } = await run(
      anthropicMessagesFormat,
      upstream(chunk('"id":"c1"')),
      SPLITS.whole as number[],
    );
    expect(text).toContain('event: message_stop');
    expect(outcomes.map((o) => o.status)).toEqual(['completed']);
  });
});

async function runSplit(bytes: Uint8Array, split: number[]) {
  return run(chatCompletionsFormat, bytes, split);
}

test('each upstream event is parsed as often whether the check read all of it or one byte', async () => {
  const bytes = await readFixture(`${FIXTURES}/text.sse`);
  const messages = new TextDecoder()
    .decode(bytes)
    .split('\n\n')
    .filter((m) => m.startsWith('data: {')).length;
  const parse = JSON.parse;
  const parsesOf = async (split: number[]) => {
    let parses = 0;
    JSON.parse = ((text: string, reviver?: Parameters<typeof parse>[1]) => {
      parses++;
      return parse(text, reviver);
    }) as typeof JSON.parse;
    try {
      await run(chatCompletionsFormat, bytes, split);
    } finally {
      JSON.parse = parse;
    }
    return parses;
  };
  // Whole, the stream is the check's one read: it used to be decoded there, then again for billing.
  const whole = await parsesOf(SPLITS.whole as number[]);
  expect(whole).toBe(await parsesOf(SPLITS.byteByByte as number[]));
  // Once, shared by the classifier and the decoder (and a chunk the repair reads): never twice each.
  expect(whole).toBeLessThan(2 * messages);
});

describe('the first-event check', () => {
  const sse = (...events: string[]) => new TextEncoder().encode(events.map((e) => `data: ${e}\n\n`).join(''));
  const chunk = (content: string) =>
    JSON.stringify({
      id: 'c1',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'm',
      choices: [{ index: 0, delta: { content } }],
    });

  test('an error in the same read as the first event is a failure before the first byte (fails over)', async () => {
    const bytes = sse(chunk('a'), JSON.stringify({ error: { message: 'overloaded' } }));
    const failed = await awaitFirstEvent(wire(bytes, SPLITS.whole as number[]), MODEL, 5_000).catch((e) => e);
    expect(failed).toBeInstanceOf(UpstreamError);
    expect((failed as UpstreamError).message).toContain('overloaded');
  });

  test('an error in a later read reaches the client as its stream’s error event, the call failed', async () => {
    const head = sse(chunk('a'));
    const bytes = sse(chunk('a'), JSON.stringify({ error: { message: 'overloaded' } }));
    const { text, outcomes } = await runSplit(bytes, [head.length]);
    expect(text).toContain('"content":"a"');
    expect(text).toContain('overloaded');
    expect(outcomes[0]?.status).toBe('failed');
  });

  test('a stream that ends before any event, or stays silent, fails before the first byte', async () => {
    const empty = await awaitFirstEvent(wire(new Uint8Array(0), [1]), MODEL, 5_000).catch((e) => e);
    expect((empty as UpstreamError).message).toContain('ended before its first event');
    const silent: LlmStream = {
      kind: 'wire',
      format: 'chat-completions',
      body: new ReadableStream({ pull: () => new Promise(() => undefined) }),
      warnings: [],
    };
    const timedOut = await awaitFirstEvent(silent, MODEL, 100).catch((e) => e);
    expect(timedOut).toBeInstanceOf(UpstreamError);
    expect((timedOut as UpstreamError).kind).toBe('timeout');
  });
});

describe('upstreamEvents', () => {
  test('a read put back comes out first, decoded as it was; then the upstream’s next reads', async () => {
    const enc = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(enc.encode('data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\n'));
        c.enqueue(enc.encode('data: [DONE]\n\n'));
        c.close();
      },
    });
    const events = upstreamEvents(body, 'chat-completions', MODEL);
    const first = await events.next();
    events.unread(first);
    expect(await events.next()).toBe(first);
    const second = await events.next();
    expect(second.messages.map((m) => m.message.data)).toEqual(['[DONE]']);
    expect(second.messages[0]?.events.some((e) => e.type === 'finish')).toBe(true);
    expect((await events.next()).done).toBe(true);
  });
});

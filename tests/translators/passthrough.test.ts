import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { anthropicPassthrough, chatPassthrough } from '../../translators/passthrough/index.ts';
import { renameModel } from '../../translators/passthrough/passthrough-rules.ts';
import { createChatChunkRepair } from '../../translators/passthrough/index.ts';

const ctx = { gatewayModel: 'acme/chat-large', includeUsage: true };
const msg = (data: string, event?: string) => ({ id: undefined, event, data });

describe('passthrough', () => {
  test('renames the model whatever the upstream called it, dated names included', () => {
    expect(renameModel('{"id":"c","model":"gpt-4o-2024-08-06","choices":[]}', ctx)).toBe(
      '{"id":"c","model":"acme/chat-large","choices":[]}',
    );
    expect(renameModel('{"id":"c", "model" : "x\\"y"}', ctx)).toBe('{"id":"c", "model":"acme/chat-large"}');
    // A "model": inside content is escaped JSON text, never a key, and stays as it is.
    const content = '{"model":"m","choices":[{"delta":{"content":"say \\"model\\":\\"z\\""}}]}';
    expect(JSON.parse(renameModel(content, ctx))).toEqual({
      model: 'acme/chat-large',
      choices: [{ delta: { content: 'say "model":"z"' } }],
    });
  });

  test('renames the first model key holding a string; a model id is written as it is, `$&` included', () => {
    expect(renameModel('{"model":"m"}', { ...ctx, gatewayModel: 'acme/$&-$1' })).toBe('{"model":"acme/$&-$1"}');
    expect(renameModel('{"model":null,"x":{"model":"m"}}', ctx)).toBe('{"model":null,"x":{"model":"acme/chat-large"}}');
    expect(renameModel('{"model"\t:\n"m","y":1}', ctx)).toBe('{"model":"acme/chat-large","y":1}');
    for (const untouched of ['{"id":"c"}', '{"model":"unterminated', '{"model"', '{"model":1}', ''])
      expect(renameModel(untouched, ctx)).toBe(untouched);
  });

  test('property: any chunk with a top-level model decodes to the same chunk with the gateway model', () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.string(),
        fc.string(),
        fc.string({ minLength: 1 }),
        (id, model, content, gatewayModel) => {
          const chunk = { id, model, choices: [{ delta: { content } }] };
          const renamed = renameModel(JSON.stringify(chunk), { ...ctx, gatewayModel });
          expect(JSON.parse(renamed)).toEqual({ ...chunk, model: gatewayModel });
        },
      ),
      { numRuns: 500 },
    );
  });

  test('chat: a chunk whose data spanned several lines goes on as as many data lines, renamed', () => {
    // eventsource-parser joins `data:` lines with a line feed; pretty-printed JSON keeps them.
    const data = '{"id":"c",\n"model":"m",\n"choices":[{"index":0,"delta":{"content":"hi"}}]}';
    const sent = chatPassthrough.forward(msg(data), ctx) as string;
    expect(sent).toBe(
      'data: {"id":"c",\ndata: "model":"acme/chat-large",\ndata: "choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n',
    );
    // What a client's parser makes of it is the chunk, renamed.
    const joined = sent
      .trimEnd()
      .split('\n')
      .map((line) => line.slice('data: '.length))
      .join('\n');
    expect(JSON.parse(joined)).toEqual({
      id: 'c',
      model: 'acme/chat-large',
      choices: [{ index: 0, delta: { content: 'hi' } }],
    });
    // Two gateway ids in turn: each event gets its own, not the last one quoted.
    expect(chatPassthrough.forward(msg('{"model":"m"}'), { ...ctx, gatewayModel: 'b/other' })).toBe(
      'data: {"model":"b/other"}\n\n',
    );
    expect(chatPassthrough.forward(msg('{"model":"m"}'), ctx)).toBe('data: {"model":"acme/chat-large"}\n\n');
  });

  test('chat: usage chunk and usage:null held back unless the client asked for usage', () => {
    const chunk =
      '{"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"hi"}}],"usage":null}';
    const usage = '{"id":"c","object":"chat.completion.chunk","model":"m","choices":[],"usage":{"prompt_tokens":1}}';
    const off = { ...ctx, includeUsage: false };
    expect(chatPassthrough.forward(msg(chunk), off)).toBe(
      `data: ${chunk.replace('"model":"m"', '"model":"acme/chat-large"').replace(',"usage":null', '')}\n\n`,
    );
    expect(chatPassthrough.forward(msg(usage), off)).toBeNull();
    expect(chatPassthrough.forward(msg(usage), ctx)).toContain('"prompt_tokens":1');
    // Read from the chunk's parse, not its layout: a spaced usage-only chunk is held back too.
    expect(chatPassthrough.forward(msg('{"id": "c", "choices": [], "usage": {"prompt_tokens": 1}}'), off)).toBeNull();
    // A chunk whose parse its reader made already (the stream's case) is read from that parse.
    const parsed = { ...msg(chunk), json: { ...JSON.parse(chunk), choices: [] } };
    expect(chatPassthrough.forward(parsed, off)).toBeNull();
    expect(chatPassthrough.classify(msg('[DONE]'))).toBe('terminal');
    expect(chatPassthrough.classify(msg('{"error":{"message":"x"}}'))).toBe('error');
    expect(chatPassthrough.classify(msg('not json'))).toBe('garbage');
  });

  test('anthropic: events keep their names; only message_start is renamed; errors and garbage classified', () => {
    const start =
      '{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-x-20250101","content":[]}}';
    expect(anthropicPassthrough.forward(msg(start, 'message_start'), ctx)).toBe(
      `event: message_start\ndata: ${start.replace('claude-x-20250101', 'acme/chat-large')}\n\n`,
    );
    const delta = '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\\"model\\":\\"q\\""}}';
    expect(anthropicPassthrough.forward(msg(delta, 'content_block_delta'), ctx)).toBe(
      `event: content_block_delta\ndata: ${delta}\n\n`,
    );
    expect(anthropicPassthrough.classify(msg('{"type":"message_stop"}', 'message_stop'))).toBe('terminal');
    expect(anthropicPassthrough.classify(msg('{"type":"error"}', 'error'))).toBe('error');
    expect(anthropicPassthrough.classify(msg('<html>', 'message_delta'))).toBe('garbage');
    expect(anthropicPassthrough.errorEvent('x', 'boom')).toBe(
      'event: error\ndata: {"type":"error","error":{"type":"api_error","message":"boom"}}\n\n',
    );
  });

  test('chat: deltas the SDK helper refuses (no index, no type, no role) are repaired; complete chunks pass byte for byte', () => {
    const state = { ...ctx, chatRepair: createChatChunkRepair() };
    const call = (id: string | undefined, args: string) =>
      JSON.stringify({
        id: 'c',
        model: 'acme/chat-large',
        choices: [
          {
            index: 0,
            delta: {
              tool_calls: [
                { ...(id ? { id, function: { name: 'f', arguments: args } } : { function: { arguments: args } }) },
              ],
            },
          },
        ],
      });
    const deltaOf = (out: string | null) => JSON.parse((out ?? '').replace(/^data: /, '')).choices[0].delta;
    const indexOf = (out: string | null) => deltaOf(out).tool_calls[0].index as number;
    const first = deltaOf(chatPassthrough.forward(msg(call('a', '{"x"')), state));
    expect(first.role).toBe('assistant');
    expect(first.tool_calls[0]).toMatchObject({ index: 0, type: 'function', id: 'a' });
    expect(deltaOf(chatPassthrough.forward(msg(call(undefined, '')), state)).tool_calls[0].type).toBeUndefined();
    expect(indexOf(chatPassthrough.forward(msg(call(undefined, ':1}')), state))).toBe(0);
    expect(indexOf(chatPassthrough.forward(msg(call('b', '{}')), state))).toBe(1);
    expect(indexOf(chatPassthrough.forward(msg(call('a', '')), state))).toBe(0);
    const indexed =
      '{"id":"c","model":"acme/chat-large","choices":[{"index":0,"delta":{"tool_calls":[{"index":2,"id":"z","type":"function","function":{"arguments":""}}]}}]}';
    expect(chatPassthrough.forward(msg(indexed), state)).toBe(`data: ${indexed}\n\n`);
  });
});

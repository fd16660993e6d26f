import { describe, expect, test } from 'bun:test';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { CanonicalMessage } from '../../translators/canonical/index.ts';
import {
  renameResponseObject,
  responsesCanonicalView,
  responsesLeftOut,
  responsesPassthrough,
  responsesPassthroughRequest,
} from '../../translators/passthrough/index.ts';

const FIXTURES = `${import.meta.dir}/../fixtures/responses`;
const ctx = {
  gatewayModel: 'acme/resp-large',
  includeUsage: true,
  response: { id: 'resp_gateway1', store: true, previousResponseId: 'resp_gateway0' },
};
const msg = (data: unknown, event?: string): EventSourceMessage => ({
  id: undefined,
  event,
  data: typeof data === 'string' ? data : JSON.stringify(data),
});

async function fixtureMessages(name: string): Promise<EventSourceMessage[]> {
  const out: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (m) => out.push(m) });
  parser.feed(await Bun.file(`${FIXTURES}/${name}`).text());
  return out;
}

/** The forwarded SSE text back to messages. */
function reparse(text: string): EventSourceMessage[] {
  const out: EventSourceMessage[] = [];
  createParser({ onEvent: (m) => out.push(m) }).feed(text);
  return out;
}

describe('responses passthrough: stream events', () => {
  test('a recorded stream goes through with only the response objects renamed', async () => {
    const messages = await fixtureMessages('text.sse');
    for (const message of messages) {
      const [forwarded] = reparse(responsesPassthrough.forward(message, ctx) ?? '');
      expect(forwarded?.event).toBe(message.event);
      const before = JSON.parse(message.data);
      const after = JSON.parse(forwarded!.data);
      if (!before.response) {
        expect(forwarded!.data).toBe(message.data); // byte for byte
        continue;
      }
      const { id, model, store, previous_response_id, ...rest } = after.response;
      expect([id, model, store, previous_response_id]).toEqual([
        'resp_gateway1',
        'acme/resp-large',
        true,
        'resp_gateway0',
      ]);
      const { id: _i, model: _m, store: _s, previous_response_id: _p, ...original } = before.response;
      expect(rest).toEqual(original);
      expect(after.sequence_number).toBe(before.sequence_number);
    }
    const kinds = messages.map((m) => responsesPassthrough.classify(m));
    expect(kinds.at(-1)).toBe('terminal');
    expect(kinds.slice(0, -1).every((k) => k === 'data')).toBe(true);
  });

  test('a "model" key inside a tool schema is not taken for the response model', () => {
    const tool = { type: 'function', name: 'pick', parameters: { properties: { model: { type: 'string' } } } };
    const event = {
      type: 'response.created',
      response: { tools: [tool], id: 'resp_up', model: 'gpt-x-2025', output: [] },
      sequence_number: 0,
    };
    const [out] = reparse(responsesPassthrough.forward(msg(event, 'response.created'), ctx) ?? '');
    const data = JSON.parse(out!.data);
    expect(data.response.tools).toEqual([tool]);
    expect(data.response.model).toBe('acme/resp-large');
  });

  test('error events, endings and garbage are classified; a documented error event gains the nested error SDKs throw on', () => {
    expect(responsesPassthrough.classify(msg({ type: 'error', code: 'x', message: 'y' }, 'error'))).toBe('error');
    for (const type of ['response.completed', 'response.incomplete', 'response.failed'])
      expect(responsesPassthrough.classify(msg({ type, response: {} }, type))).toBe('terminal');
    expect(responsesPassthrough.classify(msg('<html>', 'response.output_text.delta'))).toBe('garbage');
    expect(responsesPassthrough.classify(msg('[1,2]'))).toBe('garbage');

    const flat = { type: 'error', code: 'server_error', message: 'boom', param: null, sequence_number: 7 };
    const [out] = reparse(responsesPassthrough.forward(msg(flat, 'error'), ctx) ?? '');
    expect(JSON.parse(out!.data)).toEqual({
      ...flat,
      error: { type: 'server_error', code: 'server_error', message: 'boom', param: null },
    });
    const nested = { type: 'error', error: { type: 'server_error', code: 'c', message: 'm' } };
    expect(responsesPassthrough.forward(msg(nested, 'error'), ctx)).toBe(
      `event: error\ndata: ${JSON.stringify(nested)}\n\n`,
    );
    const ownError = JSON.parse(reparse(responsesPassthrough.errorEvent('stream_truncated', 'cut'))[0]!.data);
    expect(ownError).toMatchObject({ type: 'error', code: 'stream_truncated', error: { message: 'cut' } });
  });

  test('the final object is the terminal event’s renamed response; nothing else has one', async () => {
    const messages = await fixtureMessages('tool-call.sse');
    const finals = messages.map((m) => responsesPassthrough.finalObject?.(m, ctx));
    expect(finals.slice(0, -1).every((f) => f === undefined)).toBe(true);
    expect(finals.at(-1)).toMatchObject({
      id: 'resp_gateway1',
      model: 'acme/resp-large',
      status: 'completed',
      output: [{ type: 'function_call', call_id: 'call_Q1', name: 'search_docs' }],
    });
  });

  test('a non-stream body keeps every field but the renamed ones', async () => {
    const body = await Bun.file(`${FIXTURES}/response-text.json`).json();
    const renamed = renameResponseObject({ ...body, x_new: [1] }, ctx);
    expect(renamed).toEqual({
      ...body,
      x_new: [1],
      id: 'resp_gateway1',
      model: 'acme/resp-large',
      store: true,
      previous_response_id: 'resp_gateway0',
    });
  });
});

describe('responses passthrough: request', () => {
  const history: CanonicalMessage[] = [
    { role: 'user', content: [{ type: 'text', text: 'first question' }] },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'let me look' },
        { type: 'tool-call', id: 'call_1', name: 'lookup', arguments: '{"q":1}' },
      ],
    },
    { role: 'tool', content: [{ toolCallId: 'call_1', type: 'tool-result', content: [{ type: 'text', text: '42' }] }] },
  ];

  test('every field the client sent survives except the conversation state, which the gateway keeps', () => {
    const body = {
      model: 'acme/resp-large',
      input: [
        { role: 'user', content: 'hi' },
        { type: 'reasoning', id: 'rs_1', summary: [] },
      ],
      reasoning: { effort: 'high' },
      include: ['reasoning.encrypted_content'],
      tools: [{ type: 'web_search' }],
      max_tool_calls: 4,
      x_unknown: { deep: [1, null] },
      store: true,
      previous_response_id: 'resp_gateway0',
    };
    const { value, warnings } = responsesPassthroughRequest(body, []);
    const { store: _s, previous_response_id: _p, ...kept } = body;
    expect(value).toEqual({ ...kept, input: [{ role: 'user', content: 'hi' }], store: false });
    // The bare reasoning item (an id the stateless upstream cannot resolve) is the only thing left out, and said so.
    expect(warnings).toEqual([
      { type: 'unsupported-content', field: 'input[1]', message: expect.stringContaining('encrypted_content') },
    ]);
  });

  test('input items lose their ids, which a stateless upstream would look up; encrypted reasoning is kept', () => {
    const input = [
      { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gAAA' },
      {
        type: 'message',
        id: 'msg_1',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'x' }],
      },
      { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'f', arguments: '{}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'ok' },
    ];
    const { value, warnings } = responsesPassthroughRequest({ model: 'm', input }, []);
    expect(value.input).toEqual(input.map(({ id: _id, ...rest }) => rest));
    expect(warnings).toEqual([]);
  });

  test('the stored conversation comes first, as Responses input items; a string input becomes a user item', () => {
    const { value } = responsesPassthroughRequest(
      { model: 'm', input: 'and now?', previous_response_id: 'r' },
      history,
    );
    expect(value.previous_response_id).toBeUndefined();
    expect(value.input).toEqual([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'first question' }] },
      { type: 'message', role: 'assistant', content: 'let me look' },
      { type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: '{"q":1}' },
      { type: 'function_call_output', call_id: 'call_1', output: '42' },
      { type: 'message', role: 'user', content: 'and now?' },
    ]);
  });

  test('without a conversation the input is left exactly as sent', () => {
    expect(responsesPassthroughRequest({ model: 'm', input: 'plain' }, []).value.input).toBe('plain');
  });
});

describe('responses passthrough: what the gateway reads of the body', () => {
  test('built-in tools, their choices, call items and file parts are left out of the view; the rest is as sent', () => {
    const fn = { type: 'function', name: 'f', parameters: {} };
    const body = {
      model: 'm',
      tools: [{ type: 'web_search' }, fn, { type: 'mcp', server_label: 's' }],
      tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [] },
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'a' },
            { type: 'input_file', file_id: 'file-1' },
          ],
        },
        { type: 'web_search_call', id: 'ws_1', status: 'completed' },
        { role: 'user', content: [{ type: 'input_image', file_id: 'file-2' }] },
        { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' },
        {
          type: 'function_call_output',
          call_id: 'c',
          output: [
            { type: 'input_file', file_id: 'f' },
            { type: 'input_text', text: 'ok' },
          ],
        },
        { id: 'msg_ref' },
      ],
      reasoning: { effort: 'low' },
    };
    expect(responsesCanonicalView(body)).toEqual({
      model: 'm',
      tools: [fn],
      input: [
        { role: 'user', content: [{ type: 'input_text', text: 'a' }] },
        { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c', output: [{ type: 'input_text', text: 'ok' }] },
        { id: 'msg_ref' },
      ],
      reasoning: { effort: 'low' },
    });
    // Function tool choices and string inputs are read as they are.
    const plain = { model: 'm', input: 'hi', tool_choice: { type: 'function', name: 'f' }, tools: [fn] };
    expect(responsesCanonicalView(plain)).toEqual(plain);
    // Nothing readable left: an empty text, so the view still decodes.
    expect(responsesCanonicalView({ model: 'm', input: [{ type: 'input_file', file_id: 'x' }] }).input).toBe('');
    // What the view leaves out is held: files as files, an image by file_id as an image, the rest by its bytes.
    const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));
    expect(responsesLeftOut(body)).toEqual({
      textTokens:
        bytes(body.tools[0]) +
        bytes(body.tools[2]) +
        bytes(body.tool_choice) +
        bytes({ type: 'web_search_call', id: 'ws_1', status: 'completed' }),
      images: 1,
      files: 2,
    });
    expect(responsesLeftOut(plain)).toEqual({ textTokens: 0, images: 0, files: 0 });
    const screenshot = { type: 'computer_call_output', call_id: 'c', output: { type: 'computer_screenshot' } };
    expect(responsesLeftOut({ model: 'm', input: [screenshot] })).toEqual({ textTokens: 0, images: 1, files: 0 });
    // The passthrough request carries the same measure for the hold (files sent inline: by id they are refused).
    const inline = {
      model: 'm',
      tools: body.tools,
      input: [{ role: 'user', content: [{ type: 'input_file', file_data: 'x' }] }],
    };
    const { perCallTools: _fees, ...measured } = responsesPassthroughRequest(inline, []).uncounted;
    // Each tool the upstream runs itself (web search, MCP) is held as a file too.
    const viewed = responsesLeftOut(inline);
    expect(measured).toEqual({ ...viewed, files: viewed.files + 2 });
    expect(responsesLeftOut(inline)).toMatchObject({ images: 0, files: 1 });
    expect(() => responsesPassthroughRequest(body, [])).toThrow('input[0].content[1].file_id');
  });
});

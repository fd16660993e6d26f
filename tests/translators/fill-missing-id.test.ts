import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { anthropicPassthrough, bodyWithId, chatPassthrough } from '../../translators/passthrough/index.ts';

const msg = (data: string, event?: string) => ({ id: undefined, event, data });

describe('a same-format answer without a response id gets the one its record keeps', () => {
  test('a body with its own id is the same text; one with none, or an empty one, gets the id first', () => {
    const own = '{"id":"chatcmpl-up","object":"chat.completion","choices":[]}';
    expect(bodyWithId(own, 'chatcmpl-up')).toBe(own);
    // Spaced JSON (a Python server's) is parsed to tell, and left as it is.
    const spaced = '{"id": "chatcmpl-up", "object": "chat.completion"}';
    expect(bodyWithId(spaced, 'chatcmpl-up')).toBe(spaced);
    expect(JSON.parse(bodyWithId('{"object":"chat.completion","choices":[]}', 'chatcmpl-minted'))).toEqual({
      id: 'chatcmpl-minted',
      object: 'chat.completion',
      choices: [],
    });
    const emptied = bodyWithId('{"object":"chat.completion","id":"","model":"m"}', 'chatcmpl-minted');
    expect(Object.keys(JSON.parse(emptied))).toEqual(['id', 'object', 'model']);
    expect(JSON.parse(emptied).id).toBe('chatcmpl-minted');
    // A numeric id is not a string id: the SDKs' types say string.
    expect(JSON.parse(bodyWithId('{"id":7,"type":"message"}', 'msg_minted')).id).toBe('msg_minted');
    // An id inside the content is not the response's.
    const nested = '{"choices":[{"message":{"tool_calls":[{"id":"call_1"}]}}]}';
    expect(JSON.parse(bodyWithId(nested, 'chatcmpl-minted')).id).toBe('chatcmpl-minted');
  });

  test('property: any body keeps every field and value but a missing id', () => {
    fc.assert(
      fc.property(
        fc.dictionary(
          fc.string().filter((k) => k !== 'id' && k !== '__proto__'),
          fc.jsonValue(),
        ),
        fc.option(fc.string(), { nil: undefined }),
        (fields, id) => {
          const text = JSON.stringify(id === undefined ? fields : { id, ...fields });
          const out = JSON.parse(bodyWithId(text, 'gen-1'));
          expect(out).toEqual({ ...JSON.parse(text), id: id ? id : 'gen-1' });
        },
      ),
      { numRuns: 300 },
    );
  });

  test('chat: every chunk without an id gets it; a chunk with its own is left alone', () => {
    expect(chatPassthrough.fillId?.(msg('{"id":"c","choices":[]}'), 'x')).toBeUndefined();
    expect(
      JSON.parse(chatPassthrough.fillId?.(msg('{"object":"chat.completion.chunk","choices":[]}'), 'x') ?? ''),
    ).toEqual({
      id: 'x',
      object: 'chat.completion.chunk',
      choices: [],
    });
    expect(chatPassthrough.fillId?.(msg('[DONE]'), 'x')).toBeUndefined();
  });

  test('anthropic: only message_start names the message, and only a missing or empty id is filled', () => {
    const start = (id?: string) =>
      msg(
        JSON.stringify({ type: 'message_start', message: { ...(id === undefined ? {} : { id }), type: 'message' } }),
        'message_start',
      );
    expect(anthropicPassthrough.fillId?.(start('msg_up'), 'msg_x')).toBeUndefined();
    for (const missing of [undefined, ''])
      expect(JSON.parse(anthropicPassthrough.fillId?.(start(missing), 'msg_x') ?? '')).toEqual({
        type: 'message_start',
        message: { id: 'msg_x', type: 'message' },
      });
    expect(anthropicPassthrough.fillId?.(msg('{"type":"ping"}', 'ping'), 'msg_x')).toBeUndefined();
  });
});

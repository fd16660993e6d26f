import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { chatPassthroughRequest } from '../../translators/passthrough/index.ts';

const mark = { type: 'ephemeral' };

describe('a chat body passed through to an OpenAI-compatible upstream', () => {
  test('with nothing to withhold it is the client’s own object, untouched', () => {
    const body = {
      model: 'gw/model',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      seed: 7,
      logit_bias: { '1': -100 },
      top_k: 40,
      tools: [{ type: 'function', function: { name: 'f', parameters: {} } }],
    };
    const { value, warnings } = chatPassthroughRequest(body, []);
    expect(value).toBe(body);
    expect(warnings).toEqual([]);
  });

  test('service_tier and store are withheld, told only when set to something', () => {
    const told = chatPassthroughRequest({ model: 'm', messages: [], service_tier: 'priority', store: true }, []);
    expect(told.value).toEqual({ model: 'm', messages: [] });
    expect(told.warnings.map((w) => [w.type, w.field])).toEqual([
      ['unsupported-setting', 'service_tier'],
      ['unsupported-setting', 'store'],
    ]);
    const quiet = chatPassthroughRequest({ model: 'm', messages: [], service_tier: null, store: false }, []);
    expect(quiet.value).toEqual({ model: 'm', messages: [] });
    expect(quiet.warnings).toEqual([]);
  });

  test('cache marks leave messages, their parts and tools, with one warning; the input is not changed', () => {
    const body = {
      model: 'm',
      messages: [
        { role: 'system', content: 'ctx', cache_control: mark },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'a', cache_control: mark },
            { type: 'text', text: 'b' },
          ],
        },
        { role: 'assistant', content: 'ok' },
      ],
      tools: [{ type: 'function', function: { name: 'f' }, cache_control: mark }],
    };
    const before = structuredClone(body);
    const { value, warnings } = chatPassthroughRequest(body, []);
    expect(value).toEqual({
      model: 'm',
      messages: [
        { role: 'system', content: 'ctx' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b' },
          ],
        },
        { role: 'assistant', content: 'ok' },
      ],
      tools: [{ type: 'function', function: { name: 'f' } }],
    });
    expect(warnings.map((w) => w.field)).toEqual(['cache_control']);
    expect(body).toEqual(before);
    // Unmarked messages are the client's own objects.
    expect((value.messages as unknown[])[2]).toBe(body.messages[2]);
  });

  test('whatever the body, no withheld setting or cache mark is sent and everything else is', () => {
    const part = fc.record({
      type: fc.constant('text'),
      text: fc.string(),
      cache_control: fc.option(fc.constant(mark)),
    });
    const message = fc.record(
      {
        role: fc.constantFrom('system', 'user', 'assistant'),
        content: fc.oneof(fc.string(), fc.array(part, { maxLength: 3 })),
        cache_control: fc.constant(mark),
      },
      { requiredKeys: ['role', 'content'] },
    );
    const body = fc.record(
      {
        model: fc.string(),
        messages: fc.array(message, { maxLength: 4 }),
        service_tier: fc.option(fc.constantFrom('auto', 'priority', 'flex')),
        store: fc.option(fc.boolean()),
        seed: fc.integer(),
        extra: fc.jsonValue(),
      },
      { requiredKeys: ['model', 'messages'] },
    );
    fc.assert(
      fc.property(body, (b) => {
        const { value } = chatPassthroughRequest(b, []);
        expect('service_tier' in value || 'store' in value).toBe(false);
        expect(JSON.stringify(value.messages)).not.toContain('cache_control');
        for (const key of ['model', 'seed', 'extra'] as const) expect(value[key]).toEqual(b[key]);
        expect((value.messages as unknown[]).length).toBe(b.messages.length);
      }),
    );
  });
});

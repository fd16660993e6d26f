import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { renameBodyModel } from '../../translators/passthrough/rename-body-model.ts';

const completion = {
  id: 'chatcmpl-up',
  object: 'chat.completion',
  created: 1,
  model: 'gpt-4o-2024-08-06',
  system_fingerprint: 'fp_1',
  choices: [{ index: 0, message: { role: 'assistant', content: 'say "model": "x"' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
};

describe('renameBodyModel', () => {
  test('the top-level model is renamed and every other byte is the upstream’s', () => {
    const text = JSON.stringify(completion, null, 1);
    const renamed = renameBodyModel(text, 'acme/$&-4o');
    expect(renamed).toBe(text.replace('"gpt-4o-2024-08-06"', () => '"acme/$&-4o"'));
    expect(JSON.parse(renamed)).toEqual({ ...completion, model: 'acme/$&-4o' });
  });

  test('a nested model key before the top-level one, a second model key, a non-string model', () => {
    const nestedFirst = `{"meta":{"model":"inner"},"id":"x","model":"outer","content":[]}`;
    expect(JSON.parse(renameBodyModel(nestedFirst, 'gw'))).toEqual({
      meta: { model: 'inner' },
      id: 'x',
      model: 'gw',
      content: [],
    });
    // JSON.parse keeps the last of two equal keys: the client must not see the upstream's either way.
    expect(JSON.parse(renameBodyModel(`{"model":"a","x":1,"model":"b"}`, 'gw')).model).toBe('gw');
    expect(JSON.parse(renameBodyModel(`{"object":"model","model":null}`, 'gw'))).toEqual({
      object: 'model',
      model: 'gw',
    });
    expect(JSON.parse(renameBodyModel(`{"id":"x"}`, 'gw'))).toEqual({ id: 'x', model: 'gw' });
  });

  test('property: any object with any layout comes back equal but for its model', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 })),
        fc.dictionary(fc.constantFrom('model', 'id', 'x'), fc.jsonValue({ maxDepth: 2 })),
        fc.string(),
        fc.string(),
        fc.constantFrom(undefined, 0, 2),
        (before, nested, upstreamModel, gatewayModel, indent) => {
          const body = { ...before, inner: nested, model: upstreamModel };
          const renamed = renameBodyModel(JSON.stringify(body, null, indent), gatewayModel);
          expect(JSON.parse(renamed)).toEqual(JSON.parse(JSON.stringify({ ...body, model: gatewayModel })));
        },
      ),
      { numRuns: 500 },
    );
  });
});

import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { MAX_JSON_DEPTH, isStorableString } from '../../src/http/hostile-json.ts';
import { recordableInput } from '../../src/llm/record-input.ts';

/** Every string in `value` (keys included) as the record would hold it. */
function strings(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const item of value) strings(item, out);
  else if (value && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) {
      out.push(k);
      strings(v, out);
    }
  return out;
}

describe('recordableInput (the request as its task record keeps it)', () => {
  test('long strings cut to 4 KiB and marked; NUL and lone surrogates replaced in values and keys', () => {
    const long = 'a'.repeat(5000);
    const input = { model: 'm', messages: [{ role: 'user', content: long }], 'k\u0000': 'x\ud800y' };
    const kept = recordableInput(input) as Record<string, unknown>;
    expect((kept.messages as Array<{ content: string }>)[0]?.content).toBe(`${'a'.repeat(4096)}…[904 more characters]`);
    for (const s of strings(kept)) expect(isStorableString(s)).toBe(true);
    expect(Object.keys(kept)).toHaveLength(3);
    // The request itself is left as sent (the upstream gets it that way).
    expect(input.messages[0]?.content).toBe(long);
  });

  test('nesting past the limit is cut with a marker', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < MAX_JSON_DEPTH + 5; i++) deep = { d: deep };
    expect(JSON.stringify(recordableInput(deep))).toContain('[nested too deep]');
  });

  test('a request with nothing to change is kept as it is, not copied', () => {
    const input = { model: 'm', messages: [{ role: 'user', content: 'hi' }], temperature: 0.2, stop: null };
    expect(recordableInput(input)).toBe(input);
  });

  test('property: the record is storable, equal to the input where the input was, and never changes the input', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.string({ unit: 'binary', maxLength: 20 }), (json, odd) => {
        const input = { json, odd: { [odd]: odd } };
        const before = JSON.stringify(input);
        const kept = recordableInput(input);
        expect(JSON.stringify(input)).toBe(before);
        for (const s of strings(kept)) expect(isStorableString(s)).toBe(true);
        if (strings(input).every((s) => isStorableString(s) && s.length <= 4096)) expect(kept).toEqual(input);
      }),
      { numRuns: 300 },
    );
  });
});

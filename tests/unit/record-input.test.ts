import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { MAX_JSON_DEPTH, isStorableString } from '../../src/http/hostile-json.ts';
import { MAX_RECORDED_CHARS, recordableInput } from '../../src/llm/record-input.ts';

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

  test('a conversation past 256 KiB keeps its short top-level settings and says how large it was', () => {
    const messages = Array.from({ length: 100 }, (_, i) => ({ role: 'user', content: `${i} ${'word '.repeat(800)}` }));
    const input = { model: 'm', messages, max_tokens: 64, stream: true, stop: null, user: 'u'.repeat(300) };
    const kept = recordableInput(input) as Record<string, unknown>;
    expect(Object.keys(kept)).toEqual(['model', 'max_tokens', 'stream', 'stop', 'not_recorded']);
    expect(kept).toMatchObject({ model: 'm', max_tokens: 64, stream: true, stop: null });
    expect(kept.not_recorded).toMatch(/^request not recorded: more than 262,\d{3} characters, past the 256 KiB/);
    expect(input.messages).toHaveLength(100);
  });

  test('a conversation under 256 KiB is kept whole; a `__proto__` field of one past it stays a field', () => {
    const messages = Array.from({ length: 50 }, () => ({ role: 'user', content: 'word '.repeat(800) }));
    const input = { model: 'm', messages };
    expect(recordableInput(input)).toBe(input);
    const hostile = JSON.parse(`{"__proto__": "x", "messages": ${JSON.stringify([...messages, ...messages])}}`);
    const kept = recordableInput(hostile) as Record<string, unknown>;
    expect(Object.getPrototypeOf(kept)).toBe(Object.prototype);
    expect(Object.keys(kept)).toEqual(['__proto__', 'not_recorded']);
  });

  test('property: a record kept whole is at most 256 KiB of JSON; a larger one keeps the settings only', () => {
    const seen = { whole: 0, settings: 0 };
    const message = fc.record({
      role: fc.constantFrom('user', 'assistant'),
      length: fc.nat(6000),
      word: fc.string({ unit: fc.constantFrom(...'abcdefgh') }),
    });
    fc.assert(
      fc.property(fc.array(message, { maxLength: 160, size: 'max' }), (drawn) => {
        const messages = drawn.map((m) => ({
          role: m.role,
          content: `${m.word} `.repeat(m.length).slice(0, m.length),
        }));
        const kept = recordableInput({ model: 'm', messages }) as Record<string, unknown>;
        if ('not_recorded' in kept) {
          seen.settings++;
          expect(JSON.stringify(messages).length).toBeGreaterThan(MAX_RECORDED_CHARS / 2);
        } else {
          seen.whole++;
          expect(JSON.stringify(kept).length).toBeLessThanOrEqual(MAX_RECORDED_CHARS);
        }
      }),
      { numRuns: 100 },
    );
    // Both sides of the limit were drawn.
    expect(seen.whole > 0 && seen.settings > 0).toBe(true);
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

import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import {
  MAX_JSON_DEPTH,
  findUnstorableString,
  isStorableString,
  storableString,
  toStorable,
} from '../../src/http/hostile-json.ts';
import { jsonTextTooDeep } from '../../translators/common/json-text-depth.ts';

/** Strings with every kind of UTF-16 unit, NUL and lone surrogates included. */
const anyString = fc.string({ unit: 'binary' });
const anyJson = fc
  .jsonValue()
  .chain((base) => fc.tuple(fc.constant(base), anyString, anyString))
  .map(([base, a, b]) => ({ base, [a]: b, list: [a, { b }] }));

function depthOf(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + children.reduce<number>((max, item) => Math.max(max, depthOf(item)), 0);
}

describe('hostile JSON', () => {
  test('toStorable always yields strings Postgres accepts, and leaves storable values untouched', () => {
    fc.assert(
      fc.property(anyJson, (value) => {
        const stored = toStorable(value);
        expect(findUnstorableString(stored)).toBeUndefined();
        if (findUnstorableString(value) === undefined) expect(stored).toBe(value);
      }),
    );
  });

  test('a NUL or lone surrogate is found at its path', () => {
    expect(findUnstorableString({ input: { prompt: 'a\u0000b' } })).toEqual({
      path: 'input.prompt',
      reason: 'must not contain the NUL character',
    });
    expect(findUnstorableString({ list: ['ok', 'x\ud800'] })?.path).toBe('list[1]');
    expect(findUnstorableString({ list: ['\udc00y'] })?.path).toBe('list[0]');
    expect(findUnstorableString({ ok: '\ud83d\ude00 paired' })).toBeUndefined();
    expect(findUnstorableString({ 'k\u0000': 1 })?.reason).toContain('key');
  });

  test('storableString keeps every valid character and replaces only what Postgres refuses', () => {
    fc.assert(
      fc.property(anyString, (text) => {
        const out = storableString(text);
        expect(isStorableString(out)).toBe(true);
        expect(out.length).toBe(text.length);
        if (isStorableString(text)) expect(out).toBe(text);
      }),
    );
  });

  test('jsonTextTooDeep agrees with the parsed depth, strings with brackets included', () => {
    fc.assert(
      fc.property(fc.jsonValue({ depthSize: 'large' }), fc.integer({ min: 1, max: 8 }), (value, max) => {
        const text = JSON.stringify(value);
        expect(jsonTextTooDeep(text, max)).toBe(depthOf(value) > max);
      }),
    );
    expect(jsonTextTooDeep(`${'['.repeat(20_000)}${']'.repeat(20_000)}`, MAX_JSON_DEPTH)).toBe(true);
    expect(jsonTextTooDeep(`${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`, MAX_JSON_DEPTH)).toBe(false);
    expect(jsonTextTooDeep(JSON.stringify({ text: '[[[[[[[[[[\\"{{{{{{{{' }), 2)).toBe(false);
  });
});

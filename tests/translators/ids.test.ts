import { describe, expect, test } from 'bun:test';
import { mintId } from '../../translators/common/ids.ts';

describe('mintId', () => {
  test('prefix, then the asked length of base-62 characters; distinct across many pool refills', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 20_000; i++) {
      const id = mintId('chatcmpl-');
      expect(id).toMatch(/^chatcmpl-[0-9a-zA-Z]{24}$/);
      seen.add(id);
    }
    expect(seen.size).toBe(20_000);
    expect(mintId('call_', 8)).toMatch(/^call_[0-9a-zA-Z]{8}$/);
  });

  test('every alphabet character turns up, and a length beyond the random pool still works', () => {
    const chars = new Set(Array.from({ length: 2_000 }, () => mintId('')).join(''));
    expect(chars.size).toBe(62);
    expect(mintId('x_', 5000)).toMatch(/^x_[0-9a-zA-Z]{5000}$/);
  });
});

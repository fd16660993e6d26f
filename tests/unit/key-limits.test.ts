import { describe, expect, test } from 'bun:test';
import * as v from 'valibot';
import { modelAllowed, UNRESTRICTED } from '../../src/keys/key-policy.ts';
import { KeyRateLimits } from '../../src/keys/key-rate-limits.ts';
import { checkKeyRequest } from '../../src/keys/key-request-check.ts';
import { CreateKeyBody, UpdateKeyBody } from '../../src/keys/key-settings.ts';
import { formatIssues } from '../../src/http/validation.ts';
import { MemoryStore } from '../../src/store/memory-store.ts';

describe('model allow-list', () => {
  test('exact ids, provider slugs and slug/* match; nothing else does', () => {
    expect(modelAllowed(null, 'acme/chat')).toBe(true);
    expect(modelAllowed(['acme/chat'], 'acme/chat')).toBe(true);
    expect(modelAllowed(['acme/chat'], 'acme/chat-large')).toBe(false);
    expect(modelAllowed(['acme'], 'acme/chat-large')).toBe(true);
    expect(modelAllowed(['acme/*'], 'acme/chat/v2')).toBe(true);
    expect(modelAllowed(['acme/*'], 'acmex/chat')).toBe(false);
    expect(modelAllowed(['acm'], 'acme/chat')).toBe(false);
    expect(modelAllowed(['acme/*'], 'other/acme')).toBe(false);
  });
});

describe('key settings', () => {
  const issues = (schema: v.GenericSchema, body: unknown) => {
    const result = v.safeParse(schema, body);
    return result.success ? '' : formatIssues(result.issues);
  };

  test('valid settings pass; null clears on update; each bad one is named', () => {
    expect(issues(CreateKeyBody, { name: 'ci', budget_usd: 5, budget_period: 'week', models: ['acme/*'] })).toBe('');
    expect(issues(UpdateKeyBody, { budget_usd: null, models: null, rpm: null, expires_at: null })).toBe('');
    expect(issues(CreateKeyBody, {})).toContain('name');
    expect(issues(CreateKeyBody, { name: 'a\u0007b' })).toContain('name: must not contain control characters');
    expect(issues(CreateKeyBody, { name: 'x', models: [] })).toContain('models');
    expect(issues(CreateKeyBody, { name: 'x', models: ['a b'] })).toContain('models[0]');
    expect(issues(CreateKeyBody, { name: 'x', tpm: 0 })).toContain('tpm');
    expect(issues(CreateKeyBody, { name: 'x', budget_usd: Number.POSITIVE_INFINITY })).toContain('budget_usd');
    expect(issues(CreateKeyBody, { name: 'x', expires_at: Math.floor(Date.now() / 1000) - 1 })).toContain(
      'expires_at: must be in the future',
    );
    expect(issues(UpdateKeyBody, { spend_usd: 0 })).toContain('spend_usd');
  });
});

describe('rpm and tpm windows', () => {
  test('rpm admits exactly the limit per minute, refused requests do not count, the next minute starts afresh', async () => {
    let now = 60_000 * 1000 + 15_000;
    const limits = new KeyRateLimits(new MemoryStore(), () => now);
    const outcomes = await Promise.all(Array.from({ length: 10 }, () => limits.request(1, 4)));
    expect(outcomes.filter((o) => o.ok)).toHaveLength(4);
    const refused = outcomes.find((o) => !o.ok);
    expect(refused).toEqual({ ok: false, retryAfterSeconds: 45 });
    // Another key has its own window.
    expect((await limits.request(2, 4)).ok).toBe(true);
    now += 45_000;
    expect((await limits.request(1, 4)).ok).toBe(true);
  });

  test('tpm counts the estimate, then the real usage; a refused call takes nothing', async () => {
    const now = 120_000 * 1000;
    const store = new MemoryStore();
    const limits = new KeyRateLimits(store, () => now);
    const first = await limits.tokens(7, 100, 60);
    expect(first.ok).toBe(true);
    expect((await limits.tokens(7, 100, 60)).ok).toBe(false); // 60 + 60 > 100
    if (!first.ok) throw new Error('unreachable');
    await limits.correct(first.ticket, 20); // the call used 20 tokens
    const second = await limits.tokens(7, 100, 60); // 20 + 60 ≤ 100
    expect(second.ok).toBe(true);
    expect((await limits.tokens(7, 100, 21)).ok).toBe(false); // 80 + 21 > 100
    expect((await limits.tokens(7, 100, 20)).ok).toBe(true); // 80 + 20 = 100
  });

  test('the request check: an expired key, a key without limits (no store call), rpm', async () => {
    let calls = 0;
    const store = new MemoryStore();
    const counting = new Proxy(store, {
      get(target, prop, receiver) {
        if (prop === 'incr') calls++;
        return Reflect.get(target, prop, receiver);
      },
    });
    const limits = new KeyRateLimits(counting);
    expect(await checkKeyRequest(1, UNRESTRICTED, limits)).toBeNull();
    expect(calls).toBe(0);
    expect(await checkKeyRequest(1, { ...UNRESTRICTED, expiresAt: 1000 }, limits, 1000)).toEqual({ kind: 'expired' });
    expect(await checkKeyRequest(1, { ...UNRESTRICTED, expiresAt: 1001 }, limits, 1000)).toBeNull();
    const rpm1 = { ...UNRESTRICTED, rpm: 1 };
    expect(await checkKeyRequest(1, rpm1, limits)).toBeNull();
    expect((await checkKeyRequest(1, rpm1, limits))?.kind).toBe('rpm');
  });
});

import { describe, expect, test } from 'bun:test';
import { Elysia } from 'elysia';
import * as v from 'valibot';
import { generateApiKey, hashApiKey, sameHash } from '../../src/auth/api-keys.ts';
import { envelope } from '../../src/http/envelope.ts';
import { errorHandler } from '../../src/http/error-handler.ts';
import { unprocessable } from '../../src/http/errors.ts';
import { parseOr422 } from '../../src/http/parse.ts';
import { loggedPath } from '../../src/http/request-path.ts';
import { Logger } from '../../src/ops/logger.ts';

describe('envelope', () => {
  test('omits empty arrays and objects inside data, keeps data itself', () => {
    expect(envelope({ a: [], b: {}, c: [1], d: { e: [] }, f: null, g: 0 })).toEqual({
      success: true,
      code: 200,
      data: { c: [1], f: null, g: 0 } as never,
    });
    expect(envelope([])).toEqual({ success: true, code: 200, data: [] });
  });
});

describe('validation messages name the field', () => {
  const schema = v.object({ models: v.array(v.object({ pricing: v.object({ input_per_mtok: v.number() }) })) });
  test('nested path with indices', () => {
    expect(() =>
      parseOr422(schema, { models: [{ pricing: { input_per_mtok: 1 } }, { pricing: { input_per_mtok: 'x' } }] }),
    ).toThrow('models[1].pricing.input_per_mtok: expected number, received "x"');
    expect(() => parseOr422(schema, undefined)).toThrow('request body is required (JSON)');
  });
});

describe('api keys', () => {
  test('are long, random, hashed with SHA-256 and compared in constant time', () => {
    const a = generateApiKey();
    const b = generateApiKey();
    expect(a).toMatch(/^gw_[A-Za-z0-9]{48}$/);
    expect(a).not.toBe(b);
    expect(hashApiKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sameHash(hashApiKey(a), hashApiKey(a))).toBe(true);
    expect(sameHash(hashApiKey(a), hashApiKey(b))).toBe(false);
    expect(sameHash('ab', 'abcd')).toBe(false);
  });
});

describe('error handler', () => {
  test('an unexpected exception is a 500 envelope with no stack; the log keeps it', async () => {
    const lines: string[] = [];
    const log = new Logger('info', (text) => lines.push(text));
    const app = new Elysia()
      .use(errorHandler(log))
      .get('/boom', () => {
        throw new Error('secret internals at /srv/app.ts:12');
      })
      .get('/typed', () => {
        throw unprocessable('x: is required');
      });
    const res = await app.handle(new Request('http://local/boom'));
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(JSON.parse(text)).toEqual({ success: false, code: 500, data: { message: 'internal error' } });
    expect(text).not.toContain('secret');
    log.flush();
    expect(lines.join('')).toContain('secret internals');
    const typed = await app.handle(new Request('http://local/typed'));
    expect(typed.status).toBe(422);
    expect(await typed.json()).toEqual({ success: false, code: 422, data: { message: 'x: is required' } });
  });
});

test('an access log line keeps at most 512 characters of the path, and says how many it left out', () => {
  const long = `http://gw.test/${'a'.repeat(15_000)}?q=1`;
  const logged = loggedPath(long);
  expect(logged.startsWith(`/${'a'.repeat(511)}…`)).toBe(true);
  expect(logged.endsWith('(+14489)')).toBe(true);
  expect(loggedPath('http://gw.test/v1/models?x=1')).toBe('/v1/models');
});

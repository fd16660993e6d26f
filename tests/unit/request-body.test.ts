import { describe, expect, spyOn, test } from 'bun:test';
import { Elysia } from 'elysia';
import type { AppContext } from '../../src/app/context.ts';
import { maxRequestBodySize } from '../../src/app/serve.ts';
import { authPlugin } from '../../src/auth/auth-plugin.ts';
import type { Db } from '../../src/db/database.ts';
import { bodyErrorHandler } from '../../src/http/body-error-handler.ts';
import { errorHandler } from '../../src/http/error-handler.ts';
import { OpenAIStyleError } from '../../src/http/errors.ts';
import {
  bodyFullyRead,
  LLM_BODY_MAX_BYTES,
  parseJsonText,
  readBodyBytes,
  readJsonBody,
} from '../../src/http/request-body.ts';
import { Logger } from '../../src/ops/logger.ts';
import { MemoryStore } from '../../src/store/memory-store.ts';

const MIB = 1024 * 1024;

/** A body that counts what is pulled from it: `total` bytes (endless by default), optionally stalling. */
function countingBody(opts: { total?: number; chunk?: number; stallAfter?: number; text?: string } = {}) {
  const chunk = opts.chunk ?? 64 * 1024;
  let pulled = 0;
  const source = opts.text === undefined ? undefined : new TextEncoder().encode(opts.text);
  const total = source?.byteLength ?? opts.total ?? Number.POSITIVE_INFINITY;
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (opts.stallAfter !== undefined && pulled >= opts.stallAfter) return new Promise(() => undefined);
        if (pulled >= total) return controller.close();
        const n = Math.min(chunk, total - pulled);
        controller.enqueue(source ? source.slice(pulled, pulled + n) : new Uint8Array(n).fill(0x20));
        pulled += n;
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, pulled: () => pulled };
}

function post(path: string, body: ReadableStream<Uint8Array>, headers: Record<string, string> = {}) {
  return new Request(`http://localhost${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
    duplex: 'half',
  } as RequestInit);
}

/** The API's auth plugin in front of two routes, with a key table of one key. */
function app() {
  const ctx = {
    env: { bodyTimeoutMs: 300, rateLimitPerMinute: 1000, authFailuresPerMinute: 1000 },
    config: {},
    store: new MemoryStore(),
    db: {} as Db,
    keys: { authenticate: async (key: string) => (key === 'gw_good' ? { accountId: 1, keyId: 1 } : null) },
    rateLimiter: { checkAll: () => ({ allowed: true, retryAfterSeconds: 0 }) },
    requestAccount: new WeakMap(),
  } as unknown as AppContext;
  const llmShape = [
    {
      prefix: '/v1/chat/completions',
      shape: (status: number, message: string) =>
        new OpenAIStyleError(status === 422 ? 400 : status, message, 'invalid_request'),
    },
  ];
  return new Elysia()
    .use(bodyErrorHandler(llmShape))
    .use(errorHandler(new Logger('silent'), llmShape))
    .use(
      new Elysia()
        .use(authPlugin(ctx))
        .post('/v1/tasks', ({ body }) => ({ got: body }))
        .post('/v1/chat/completions', ({ body }) => ({ got: body })),
    );
}

describe('authPlugin reads bodies only after authentication, within limits', () => {
  test('without a valid key the body is never pulled', async () => {
    for (const headers of [{}, { authorization: 'Bearer gw_wrong' }] as Array<Record<string, string>>) {
      const body = countingBody();
      const res = await app().handle(post('/v1/tasks', body.stream, headers));
      expect(res.status).toBe(401);
      expect(body.pulled()).toBe(0);
    }
  });

  test('a streamed body over the cap is cut just past the cap: 413, in the path’s shape', async () => {
    const body = countingBody();
    const res = await app().handle(post('/v1/tasks', body.stream, { authorization: 'Bearer gw_good' }));
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({
      success: false,
      code: 413,
      data: { message: `request body is larger than ${MIB} bytes` },
    });
    expect(res.headers.get('connection')).toBe('close');
    expect(body.pulled()).toBeLessThanOrEqual(MIB + 64 * 1024);
    const llm = countingBody();
    const chat = await app().handle(post('/v1/chat/completions', llm.stream, { authorization: 'Bearer gw_good' }));
    expect(chat.status).toBe(413);
    expect((await chat.json()).error.message).toBe(`request body is larger than ${LLM_BODY_MAX_BYTES} bytes`);
    expect(llm.pulled()).toBeLessThanOrEqual(LLM_BODY_MAX_BYTES + 64 * 1024);
  });

  test('a declared Content-Length over the cap is refused without pulling a byte', async () => {
    const body = countingBody();
    const res = await app().handle(
      post('/v1/tasks', body.stream, { authorization: 'Bearer gw_good', 'content-length': String(MIB + 1) }),
    );
    expect(res.status).toBe(413);
    expect(body.pulled()).toBe(0);
  });

  test('a body that stalls is cut at the deadline with a 408', async () => {
    const body = countingBody({ stallAfter: 10 });
    const started = performance.now();
    const res = await app().handle(post('/v1/chat/completions', body.stream, { authorization: 'Bearer gw_good' }));
    expect(res.status).toBe(408);
    expect((await res.json()).error.message).toBe('request body did not arrive within 0.3 s');
    expect(performance.now() - started).toBeLessThan(2000);
  });

  test('20,000 levels of nesting never reach JSON.parse; ordinary bodies parse as before', async () => {
    const parse = spyOn(JSON, 'parse');
    try {
      const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
      const res = await app().handle(
        post('/v1/tasks', countingBody({ text: deep }).stream, { authorization: 'Bearer gw_good' }),
      );
      expect(res.status).toBe(422);
      expect(await res.json()).toEqual({
        success: false,
        code: 422,
        data: { message: 'request body nests deeper than 64 levels' },
      });
      expect(parse.mock.calls.some(([text]) => typeof text === 'string' && text.length >= 40_000)).toBe(false);
    } finally {
      parse.mockRestore();
    }
    const ok = await app().handle(
      post('/v1/tasks', countingBody({ text: '{"a":[1,{"b":2}]}' }).stream, { authorization: 'Bearer gw_good' }),
    );
    expect(await ok.json()).toEqual({ got: { a: [1, { b: 2 }] } });
    const bad = await app().handle(
      post('/v1/tasks', countingBody({ text: '{"a":' }).stream, { authorization: 'Bearer gw_good' }),
    );
    expect(bad.status).toBe(422);
    expect(await bad.json()).toEqual({
      success: false,
      code: 422,
      data: { message: 'request body is not valid JSON' },
    });
    const badLlm = await app().handle(
      post('/v1/chat/completions', countingBody({ text: '{"a":' }).stream, { authorization: 'Bearer gw_good' }),
    );
    expect(badLlm.status).toBe(400);
  });
});

test('nesting is measured, not bracket counts: many shallow brackets pass, 65 levels do not', () => {
  const siblings = `[${new Array(500).fill('{"a":[1]}').join(',')}]`;
  expect((parseJsonText(siblings) as unknown[]).length).toBe(500);
  expect(parseJsonText(JSON.stringify({ text: '[{'.repeat(1000) }))).toEqual({ text: '[{'.repeat(1000) });
  const levels = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
  expect(() => parseJsonText(levels(64))).not.toThrow();
  expect(() => parseJsonText(levels(65))).toThrow('request body nests deeper than 64 levels');
  expect(() => parseJsonText(`{"a":1,"pad":[${'{},'.repeat(100)}{}],"deep":${levels(64)}}`)).toThrow(
    'nests deeper than 64',
  );
});

describe('readBodyBytes', () => {
  test('reads a body to its end and says so', async () => {
    const request = post('/x', countingBody({ total: 3 * MIB + 5 }).stream);
    expect((await readBodyBytes(request, { maxBytes: 4 * MIB, timeoutMs: 1000 })).byteLength).toBe(3 * MIB + 5);
    expect(bodyFullyRead(request)).toBe(true);
  });

  test('a body over the cap is not fully read', async () => {
    const request = post('/x', countingBody({ total: 3 * MIB }).stream);
    await expect(readJsonBody(request, { maxBytes: MIB, timeoutMs: 1000 })).rejects.toMatchObject({ status: 413 });
    expect(bodyFullyRead(request)).toBe(false);
  });
});

test('Bun’s own body ceiling is the largest route cap plus headroom, not 4 GiB', () => {
  // 2 GiB uploads as base64 JSON are the largest bodies by default.
  expect(maxRequestBodySize(2 * 1024 ** 3)).toBeLessThan(3 * 1024 ** 3);
  expect(maxRequestBodySize(2 * 1024 ** 3)).toBeGreaterThan((2 * 1024 ** 3 * 4) / 3);
  // Small uploads: the LLM cap (32 MiB) is the largest.
  expect(maxRequestBodySize(4 * MIB)).toBe(LLM_BODY_MAX_BYTES + MIB);
});

import { describe, expect, test } from 'bun:test';
import { Elysia } from 'elysia';
import fc from 'fast-check';
import { errorHandler } from '../../src/http/error-handler.ts';
import { isStorableString } from '../../src/http/hostile-json.ts';
import { requestTargetProblem } from '../../src/http/request-target.ts';
import { Logger } from '../../src/ops/logger.ts';

const base = 'http://127.0.0.1:8080';

describe('requestTargetProblem', () => {
  test('clean paths and queries pass, encoded or not', () => {
    for (const target of [
      '/',
      '/v1/tasks',
      '/v1/tasks?page=2&model=sandbox%2Fimage',
      '/v1/models/sandbox%2Fecho',
      '/files/abc.png?x=%E2%9C%93',
      '/v1/tasks?q=a+b&flag',
      '/x?%F0%9F%98%80=1',
    ]) {
      expect(requestTargetProblem(`${base}${target}`)).toBeUndefined();
    }
  });

  test('an undecodable or NUL path segment is a 400 naming the path', () => {
    for (const segment of ['%ff', '%c0%ae', '%ed%a0%80', '%', '%zz', 'x%00y', '%00']) {
      const problem = requestTargetProblem(`${base}/v1/tasks/${segment}`);
      expect(problem).toMatchObject({ status: 400, field: 'path' });
      expect(problem?.message).toStartWith('path: segment ');
    }
  });

  test('an undecodable or NUL query value is a 422 naming the parameter', () => {
    expect(requestTargetProblem(`${base}/v1/tasks?model=%00`)).toEqual({
      status: 422,
      field: 'model',
      message: 'model: must not contain the NUL character',
    });
    expect(requestTargetProblem(`${base}/v1/tasks?page=1&provider=%ff`)).toEqual({
      status: 422,
      field: 'provider',
      message: 'provider: is not valid percent-encoded UTF-8',
    });
    expect(requestTargetProblem(`${base}/v1/tasks?%ff=1`)?.message).toStartWith('query: parameter name "%ff"');
    expect(requestTargetProblem(`${base}/v1/tasks?a%00=1`)?.status).toBe(422);
  });

  test('a fragment is not part of the target', () => {
    expect(requestTargetProblem(`${base}/v1/tasks#%ff`)).toBeUndefined();
  });

  test('property: a value is refused exactly when it cannot be decoded or Postgres cannot hold it', () => {
    // Arbitrary code units and raw %XX escapes, mixed.
    const piece = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 6 }).map((s) => encodeURIComponent(s.toWellFormed())),
      fc.integer({ min: 0, max: 255 }).map((b) => `%${b.toString(16).padStart(2, '0')}`),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 6 }), (parts) => {
        const raw = parts.join('');
        let decoded: string | undefined;
        try {
          decoded = decodeURIComponent(raw);
        } catch {
          decoded = undefined;
        }
        const bad = decoded === undefined || !isStorableString(decoded);
        expect(requestTargetProblem(`${base}/v1/tasks?model=${raw}`) !== undefined).toBe(bad);
        expect(requestTargetProblem(`${base}/v1/tasks/${raw.replaceAll('/', '%2F')}`) !== undefined).toBe(bad);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('the error handler refuses a bad target before any route, in the path’s own shape', () => {
  const app = new Elysia()
    .use(errorHandler(new Logger('silent')))
    .get('/v1/tasks/:id', ({ params }) => ({ id: params.id }))
    .get('/v1/models/*', () => ({ ok: true }));

  test('envelope by default; OpenAI-style on the model endpoints', async () => {
    const res = await app.handle(new Request(`${base}/v1/tasks/%00`));
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      success: false,
      code: 400,
      data: { message: 'path: segment "%00" must not contain the NUL character' },
    });
    const model = await app.handle(new Request(`${base}/v1/models/%c0%ae`));
    expect(model.status).toBe(400);
    expect(await model.json()).toMatchObject({
      error: { type: 'invalid_request_error', message: expect.stringContaining('path') },
    });
    const query = await app.handle(new Request(`${base}/v1/tasks/x?model=%00`));
    expect(query.status).toBe(422);
    const ok = await app.handle(new Request(`${base}/v1/tasks/abc`));
    expect(await ok.json()).toEqual({ id: 'abc' });
  });
});

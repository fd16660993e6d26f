import { expect, test } from 'bun:test';
import { buildApp } from '../../src/app/build-app.ts';
import { loadEnv } from '../../src/config/env.ts';
import { openApiDocument } from '../../src/routes/openapi/document.ts';

/**
 * The OpenAPI document is generated from the route validators; this keeps its list of operations
 * in step with the routes the app really serves, both ways.
 */

/** Anything a route module touches while it is being built (its handlers never run here). */
const stub = (known: Record<string, unknown> = {}): never =>
  new Proxy(() => undefined, {
    get: (_t, p) =>
      typeof p === 'string' && p in known ? known[p] : p === 'then' || typeof p === 'symbol' ? undefined : stub(),
    apply: () => stub(),
    construct: () => stub(),
  }) as never;

/** `/v1/tasks/:task_id` and `/v1/tasks/{task_id}` → `/v1/tasks/{}`; Elysia's `*` is one parameter here. */
const shape = (path: string) => path.replace(/:[^/]+|\{[^}]+\}|\*/g, '{}');
/** Served, but not part of the API: the dashboard's page and session, provider callbacks, the document itself. */
const internal = (path: string) => /^\/(dashboard|upstream-webhooks|openapi\.json)/.test(path);

function served(): string[] {
  const env = loadEnv({ ADMIN_TOKEN: 'admin-token-for-the-route-list-0123' });
  const app = buildApp(stub({ env }), {
    providers: new Map(),
    llm: stub(),
    embeddings: stub(),
    tokenCount: stub(),
    tasks: stub(),
    webhooks: stub(),
    router: stub(),
    canceller: stub(),
    events: stub(),
  });
  return app.routes.filter((r) => !internal(r.path)).map((r) => `${r.method} ${shape(r.path)}`);
}

function documented(): string[] {
  const paths = openApiDocument().paths as Record<string, Record<string, unknown>>;
  return Object.entries(paths).flatMap(([path, operations]) =>
    Object.keys(operations).map((method) => `${method.toUpperCase()} ${shape(path)}`),
  );
}

test('every route the app serves is in the OpenAPI document', () => {
  const doc = new Set(documented());
  expect(served().filter((route) => !doc.has(route))).toEqual([]);
});

test('every documented operation is served (motion presets: one route per provider product)', () => {
  const app = new Set(served());
  const missing = documented().filter((op) => !app.has(op) && !op.endsWith('/motions'));
  expect(missing).toEqual([]);
});

test('request bodies come from the validators: a field the validator requires is required in the document', () => {
  type Body = { content: Record<string, { schema: { required?: string[] } }> };
  const doc = openApiDocument().paths as Record<string, Record<string, { requestBody?: Body }>>;
  const schemaOf = (path: string, method: string) =>
    doc[path]?.[method]?.requestBody?.content['application/json']?.schema;
  expect(schemaOf('/v1/tasks', 'post')?.required).toEqual(['model', 'input']);
  expect(schemaOf('/v1/messages', 'post')?.required).toEqual(['model', 'max_tokens', 'messages']);
  expect(schemaOf('/admin/accounts', 'post')?.required).toContain('email');
});

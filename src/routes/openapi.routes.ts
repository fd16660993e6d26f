import { Elysia } from 'elysia';
import { openApiDocument } from './openapi/document.ts';

/** `GET /openapi.json`: the document is generated once, at start, and served as bytes. */
export function openApiRoutes() {
  const body = JSON.stringify(openApiDocument());
  return new Elysia({ name: 'openapi' }).get(
    '/openapi.json',
    () => new Response(body, { headers: { 'content-type': 'application/json' } }),
  );
}

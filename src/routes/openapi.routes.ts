import { Elysia } from 'elysia';
import { openApiDocument } from './openapi.document.ts';
import { llmOpenApiPaths } from './openapi.llm-paths.ts';
import { taskOpenApiPaths } from './openapi.task-paths.ts';
import { resourceOpenApiPaths } from '../resources/openapi-paths.ts';

export function openApiRoutes() {
  const body = JSON.stringify(openApiDocument({ ...llmOpenApiPaths, ...taskOpenApiPaths, ...resourceOpenApiPaths }));
  return new Elysia({ name: 'openapi' }).get(
    '/openapi.json',
    () => new Response(body, { headers: { 'content-type': 'application/json' } }),
  );
}

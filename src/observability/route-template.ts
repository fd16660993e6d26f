import { Elysia } from 'elysia';

const templates = new WeakMap<Request, string>();

/**
 * Remembers the route template Elysia matched (`/v1/tasks/:id`), so metrics and spans name the
 * route and never the raw path (ids in paths would make a series per task). Registered before
 * every route module; a request no route matched has no template.
 */
export function routeTemplates() {
  return new Elysia({ name: 'route-templates' })
    .onTransform({ as: 'global' }, ({ request, route }) => {
      templates.set(request, route);
    })
    .onError({ as: 'global' }, ({ request, route, code }) => {
      // Refused before the transform phase (authentication reads bodies while parsing).
      if (code !== 'NOT_FOUND' && route && !templates.has(request)) templates.set(request, route);
    });
}

/** The matched template, or `unmatched` (404s, requests refused before routing). */
export function routeOf(request: Request): string {
  return templates.get(request) ?? 'unmatched';
}

import { Elysia } from 'elysia';
import type { AppContext } from '../app/context.ts';
import { authPlugin } from '../auth/auth-plugin.ts';
import { isCategory } from '../catalog/catalog.ts';
import type { Category } from '../catalog/model-object.ts';
import { OpenAIStyleError } from '../http/errors.ts';

const json = (body: string) => new Response(body, { headers: { 'content-type': 'application/json' } });

function parseCategories(raw: string | undefined): { set?: Set<Category>; key: string } {
  if (raw === undefined || raw.trim() === '') return { key: '*' };
  const set = new Set<Category>();
  for (const part of raw.split(',')) {
    const value = part.trim().toLowerCase();
    if (!isCategory(value)) {
      throw new OpenAIStyleError(
        400,
        `invalid category "${part.trim()}": expected a comma-separated list of llm, embedding, video, image, audio`,
        'invalid_category',
        'invalid_request_error',
        'category',
      );
    }
    set.add(value);
  }
  return { set, key: [...set].sort().join(',') };
}

function decodeOrUndefined(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/** `GET /v1/models` and `GET /v1/models/{model_id | provider}`: answered from pre-serialised JSON. */
export function modelRoutes(ctx: AppContext) {
  return new Elysia({ name: 'models', prefix: '/v1/models' })
    .use(authPlugin(ctx))
    .get('', ({ query }) => {
      const { set, key } = parseCategories(query.category);
      return json(ctx.catalog.listJson(ctx.catalog.list(set), key));
    })
    .get('/*', ({ params }) => {
      // Elysia leaves the wildcard encoded; the request-target guard has refused what cannot be decoded.
      const id = decodeOrUndefined(params['*']);
      if (id === undefined)
        throw new OpenAIStyleError(
          400,
          'model_id: is not valid percent-encoded UTF-8',
          'invalid_request',
          'invalid_request_error',
          'model',
        );
      const entry = ctx.catalog.get(id);
      if (entry) return json(entry.json);
      const providerModels = ctx.catalog.providerModels(id);
      if (providerModels) return json(ctx.catalog.listJson(providerModels, `provider:${id}`));
      throw new OpenAIStyleError(
        404,
        `The model '${id}' does not exist`,
        'model_not_found',
        'invalid_request_error',
        'model',
      );
    });
}

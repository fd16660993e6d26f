import { json } from './api.ts';
import type { Model } from './types.ts';

let cached: Promise<Model[]> | undefined;

/** GET /v1/models, once per page load: filters, the models page and the playground share it. */
export function catalog(): Promise<Model[]> {
  cached ??= json<{ data: Model[] }>('GET', '/v1/models')
    .then((list) => list.data)
    .catch((err: unknown) => {
      cached = undefined;
      throw err;
    });
  return cached;
}

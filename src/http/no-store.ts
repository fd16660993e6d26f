import { Elysia } from 'elysia';

/**
 * `cache-control: no-store` on every answer of the module that uses it: answers that carry a
 * secret (an API key shown once, the webhook signing secret). Called with the dashboard's
 * cookie, nothing else keeps them out of a browser's disk cache or a shared cache, as an
 * `Authorization` header would. Unnamed, so each module gets its own hook.
 */
export const noStore = () =>
  new Elysia().onBeforeHandle({ as: 'scoped' }, ({ set }) => {
    set.headers['cache-control'] = 'no-store';
  });

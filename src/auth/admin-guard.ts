import { Elysia } from 'elysia';
import type { AppContext } from '../app/context.ts';
import { clientAddress } from '../http/client-address.ts';
import { tooManyRequests, unauthorized } from '../http/errors.ts';
import { bodyLimitsFor, parseRequestBody } from '../http/request-body.ts';
import { bearerToken, hashApiKey, sameHash } from './api-keys.ts';
import { THROTTLED_MESSAGE } from './auth-plugin.ts';
import { authThrottle } from './auth-throttle.ts';

const ADMIN_UNAUTHORIZED = 'invalid or missing admin token';

/**
 * The admin token check, in front of the admin routes (src/routes/admin.routes.ts, used inside
 * the same wrapper in build-app.ts): like authPlugin, it runs before a byte of a body is read,
 * reads bodies within the JSON limits itself, and counts wrong tokens against the client
 * address's failed-authentication budget. The routes keep their own check behind it.
 */
export function adminGuard(ctx: AppContext) {
  const token = ctx.env.adminToken;
  if (!token) return new Elysia();
  const tokenHash = hashApiKey(token);
  const throttle = authThrottle(ctx);

  const check = async (request: Request): Promise<void> => {
    const address = clientAddress(request);
    const wait = throttle.retryAfter(address);
    if (wait > 0) throw tooManyRequests(THROTTLED_MESSAGE, wait);
    const given = bearerToken(request);
    if (!given) throw unauthorized(ADMIN_UNAUTHORIZED);
    if (sameHash(hashApiKey(given), tokenHash)) return;
    const retryAfter = await throttle.fail(address);
    throw retryAfter > 0 ? tooManyRequests(THROTTLED_MESSAGE, retryAfter) : unauthorized(ADMIN_UNAUTHORIZED);
  };

  const early = new WeakMap<Request, Promise<void>>();
  return new Elysia()
    .onParse({ as: 'scoped' }, async ({ request, path }, contentType: string) => {
      const checked = check(request);
      early.set(request, checked);
      await checked;
      return parseRequestBody(request, contentType, bodyLimitsFor(path, ctx.env.bodyTimeoutMs));
    })
    .onBeforeHandle({ as: 'scoped' }, async ({ request }) => {
      await (early.get(request) ?? check(request));
    });
}

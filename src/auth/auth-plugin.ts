import { Elysia } from 'elysia';
import type { AppContext } from '../app/context.ts';
import { forbidden, tooManyRequests, unauthorized, type HttpError } from '../http/errors.ts';
import { clientAddress } from '../http/client-address.ts';
import { bodyLimitsFor, parseRequestBody } from '../http/request-body.ts';
import { csrfTokenMatches, dashboardSessions, isSafeMethod } from '../dashboard/dashboard-sessions.ts';
import { readSessionIds } from '../dashboard/session-cookie.ts';
import { extractApiKey } from './api-keys.ts';
import { authThrottle } from './auth-throttle.ts';
import type { AuthContext } from './key-cache.ts';
import { requestLimits } from './request-limits.ts';

export interface AuthErrors {
  unauthorized(): HttpError;
  rateLimited(retryAfterSeconds: number): HttpError;
  /** A session request without its CSRF token; the envelope 403 when a module has no shape of its own. */
  forbidden?(message: string): HttpError;
  /** Too many failed authentications from the client's address; `rateLimited` when a module has none. */
  throttled?(retryAfterSeconds: number): HttpError;
}

export const THROTTLED_MESSAGE = 'too many failed authentication attempts from this address; try again later';

const envelopeErrors: AuthErrors = {
  unauthorized: () => unauthorized(),
  rateLimited: (retryAfter) => tooManyRequests('rate limit exceeded', retryAfter),
  throttled: (retryAfter) => tooManyRequests(THROTTLED_MESSAGE, retryAfter),
};

const CSRF_MESSAGE = 'missing or invalid x-csrf-token header (required with the dashboard session cookie)';

export interface AuthPluginOptions {
  errors?: AuthErrors;
  /** Accept `x-api-key` as well (Anthropic clients). */
  allowXApiKey?: boolean;
  /**
   * `json` (default): request bodies are read by the plugin, after authentication, within the
   * path's body limits (src/http/request-body.ts). `stream`: the module reads its own bodies
   * (its routes say `parse: 'none'`); authentication still comes first.
   */
  body?: 'json' | 'stream';
}

/**
 * Authenticates every route of the module that uses it: bearer key → account, then the per-key
 * rate limit. Unnamed on purpose, so Elysia never deduplicates it away from a module. LLM routes
 * pass their own error shapes; `allowXApiKey` serves Anthropic clients.
 *
 * Authentication happens before a byte of the body is read: a route with a body is
 * authenticated in Elysia's parse phase (which runs before `resolve`), and only then is the body
 * read, within its limits; `resolve` hands the same result to the handler. A client address
 * with too many failed authentications gets 429s for the rest of the minute (auth-throttle.ts).
 *
 * Without any Authorization header, the dashboard's session cookie is accepted instead (the page
 * calls the same API a client would); a state-changing method must then carry the session's
 * CSRF token in `x-csrf-token` or gets a 403. The bearer path does no extra work.
 */
export function authPlugin(ctx: AppContext, opts: AuthPluginOptions = {}) {
  const errors = opts.errors ?? envelopeErrors;
  const throttled = (retryAfter: number) => {
    if (errors.throttled) return errors.throttled(retryAfter);
    // A module without its own: its rate-limit error, saying what actually happened.
    const error = errors.rateLimited(retryAfter);
    error.message = THROTTLED_MESSAGE;
    return error;
  };
  const limits = requestLimits(ctx);
  const sessions = dashboardSessions(ctx);
  const throttle = authThrottle(ctx);

  const fromSession = async (ids: string[], request: Request): Promise<AuthContext | null> => {
    const found = await sessions.resolveFirst(ids);
    if (!found) return null;
    if (!isSafeMethod(request.method) && !csrfTokenMatches(found.session, request)) {
      throw errors.forbidden?.(CSRF_MESSAGE) ?? forbidden(CSRF_MESSAGE);
    }
    return found.auth;
  };

  const authenticate = async (request: Request): Promise<AuthContext> => {
    // The address is looked up only when some address is blocked, or when this one fails.
    const wait = throttle.anyBlocked() ? throttle.retryAfter(clientAddress(request)) : 0;
    if (wait > 0) throw throttled(wait);
    const key = extractApiKey(request.headers, opts.allowXApiKey ?? false);
    const sessionIds = sessionIdsOf(request, key);
    // No credentials at all is no attempt: refused, not counted.
    if (!key && sessionIds.length === 0) throw errors.unauthorized();
    const auth = key ? await ctx.keys.authenticate(key) : await fromSession(sessionIds, request);
    if (!auth) {
      const retryAfter = await throttle.fail(clientAddress(request));
      throw retryAfter > 0 ? throttled(retryAfter) : errors.unauthorized();
    }
    ctx.requestAccount.set(request, auth.accountId);
    ctx.keyUsage?.touch(auth.keyId);
    const limited = limits(auth);
    const refusal = limited instanceof Promise ? await limited : limited;
    if (refusal?.kind === 'expired') throw errors.unauthorized();
    if (refusal?.kind === 'rate') throw errors.rateLimited(refusal.retryAfterSeconds);
    // A read sees the account's own answered calls (settled after the answer with the journal).
    // (No pending call, no promise: the common read does not even yield a tick.)
    const pending = ctx.unsettled && isSafeMethod(request.method) ? ctx.unsettled(auth.accountId) : undefined;
    if (pending) await pending;
    return auth;
  };

  // A request with a body is authenticated in the parse phase; resolve then reuses the outcome.
  const early = new WeakMap<Request, Promise<AuthContext>>();
  const plugin = new Elysia().resolve(
    { as: 'scoped' },
    async ({ request }): Promise<{ auth: AuthContext }> => ({
      auth: await (early.get(request) ?? authenticate(request)),
    }),
  );
  if (opts.body === 'stream') return plugin;
  return plugin.onParse({ as: 'scoped' }, async ({ request, path }, contentType: string) => {
    const authenticated = authenticate(request);
    early.set(request, authenticated);
    await authenticated;
    return parseRequestBody(request, contentType, bodyLimitsFor(path, ctx.env.bodyTimeoutMs));
  });
}

/**
 * Whether the credentials `request` came with still stand for the key `auth` was made from: not
 * revoked or rotated, not expired, its dashboard session not ended. A long-lived answer (a task's
 * event stream) asks again as it goes, since it authenticated once: the revocation of a key ends
 * its streams too. Both look-ups are the caches every request uses (dropped on revocation).
 */
export function credentialsCheck(ctx: AppContext, request: Request, auth: AuthContext): () => Promise<boolean> {
  const key = extractApiKey(request.headers, false);
  const sessionIds = sessionIdsOf(request, key);
  const sessions = dashboardSessions(ctx);
  return async () => {
    const now = key ? await ctx.keys.authenticate(key) : ((await sessions.resolveFirst(sessionIds))?.auth ?? null);
    if (!now || now.keyId !== auth.keyId) return false;
    const expiresAt = now.policy?.expiresAt;
    return expiresAt === undefined || expiresAt === null || Date.now() < expiresAt;
  };
}

/** The dashboard session cookies a request authenticates with: none when it carries a key or any `Authorization` header. */
function sessionIdsOf(request: Request, key: string | undefined): string[] {
  return key || request.headers.has('authorization') ? [] : readSessionIds(request.headers);
}

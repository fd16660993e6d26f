import { Elysia } from 'elysia';
import type { AppContext } from '../app/context.ts';
import { forbidden, tooManyRequests, unauthorized, type HttpError } from '../http/errors.ts';
import { csrfTokenMatches, dashboardSessions, isSafeMethod } from '../dashboard/dashboard-sessions.ts';
import { readSessionId } from '../dashboard/session-cookie.ts';
import { extractApiKey } from './api-keys.ts';
import type { AuthContext } from './key-cache.ts';

export interface AuthErrors {
  unauthorized(): HttpError;
  rateLimited(retryAfterSeconds: number): HttpError;
  /** A session request without its CSRF token; the envelope 403 when a module has no shape of its own. */
  forbidden?(message: string): HttpError;
}

const envelopeErrors: AuthErrors = {
  unauthorized: () => unauthorized(),
  rateLimited: (retryAfter) => tooManyRequests('rate limit exceeded', retryAfter),
};

const CSRF_MESSAGE = 'missing or invalid x-csrf-token header (required with the dashboard session cookie)';

/**
 * `resolve`s `auth` for every route of the module that uses it: bearer key → account, then the
 * per-key rate limit. Unnamed on purpose, so Elysia never deduplicates it away from a module.
 * LLM routes pass their own error shapes; `allowXApiKey` serves Anthropic clients.
 *
 * Without any Authorization header, the dashboard's session cookie is accepted instead (the page
 * calls the same API a client would); a state-changing method must then carry the session's
 * CSRF token in `x-csrf-token` or gets a 403. The bearer path does no extra work.
 */
export function authPlugin(ctx: AppContext, opts: { errors?: AuthErrors; allowXApiKey?: boolean } = {}) {
  const errors = opts.errors ?? envelopeErrors;
  const limit = ctx.config.rateLimitPerMinute ?? ctx.env.rateLimitPerMinute;
  const sessions = dashboardSessions(ctx);
  const fromSession = async (request: Request): Promise<AuthContext | null> => {
    const id = request.headers.has('authorization') ? undefined : readSessionId(request.headers);
    const found = id ? await sessions.resolve(id) : null;
    if (!found) return null;
    if (!isSafeMethod(request.method) && !csrfTokenMatches(found.session, request)) {
      throw errors.forbidden?.(CSRF_MESSAGE) ?? forbidden(CSRF_MESSAGE);
    }
    return found.auth;
  };
  return new Elysia().resolve({ as: 'scoped' }, async ({ request }): Promise<{ auth: AuthContext }> => {
    const key = extractApiKey(request.headers, opts.allowXApiKey ?? false);
    const auth = key ? await ctx.keys.authenticate(key) : await fromSession(request);
    if (!auth) throw errors.unauthorized();
    ctx.requestAccount.set(request, auth.accountId);
    const decision = ctx.rateLimiter.check(`key:${auth.keyId}`, limit);
    if (!decision.allowed) throw errors.rateLimited(decision.retryAfterSeconds);
    return { auth };
  });
}

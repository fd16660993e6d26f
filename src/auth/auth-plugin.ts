import { Elysia } from 'elysia';
import type { AppContext } from '../app/context.ts';
import { tooManyRequests, unauthorized, type HttpError } from '../http/errors.ts';
import { extractApiKey } from './api-keys.ts';
import type { AuthContext } from './key-cache.ts';

export interface AuthErrors {
  unauthorized(): HttpError;
  rateLimited(retryAfterSeconds: number): HttpError;
}

const envelopeErrors: AuthErrors = {
  unauthorized: () => unauthorized(),
  rateLimited: (retryAfter) => tooManyRequests('rate limit exceeded', retryAfter),
};

/**
 * `resolve`s `auth` for every route of the module that uses it: bearer key → account, then the
 * per-key rate limit. Unnamed on purpose, so Elysia never deduplicates it away from a module.
 * LLM routes pass their own error shapes; `allowXApiKey` serves Anthropic clients.
 */
export function authPlugin(ctx: AppContext, opts: { errors?: AuthErrors; allowXApiKey?: boolean } = {}) {
  const errors = opts.errors ?? envelopeErrors;
  const limit = ctx.config.rateLimitPerMinute ?? ctx.env.rateLimitPerMinute;
  return new Elysia().resolve({ as: 'scoped' }, async ({ request }): Promise<{ auth: AuthContext }> => {
    const key = extractApiKey(request.headers, opts.allowXApiKey ?? false);
    if (!key) throw errors.unauthorized();
    const auth = await ctx.keys.authenticate(key);
    if (!auth) throw errors.unauthorized();
    ctx.requestAccount.set(request, auth.accountId);
    const decision = ctx.rateLimiter.check(`key:${auth.keyId}`, limit);
    if (!decision.allowed) throw errors.rateLimited(decision.retryAfterSeconds);
    return { auth };
  });
}

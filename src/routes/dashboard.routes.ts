import { Elysia } from 'elysia';
import * as v from 'valibot';
import type { AppContext } from '../app/context.ts';
import { authPlugin, THROTTLED_MESSAGE } from '../auth/auth-plugin.ts';
import { authThrottle } from '../auth/auth-throttle.ts';
import { requestLimits } from '../auth/request-limits.ts';
import { csrfTokenMatches, dashboardSessions, SESSION_TTL_MS, type Session } from '../dashboard/dashboard-sessions.ts';
import { PageAssets } from '../dashboard/page-assets.ts';
import { dashboardHeaders } from '../dashboard/security-headers.ts';
import { clearedSessionCookie, readSessionIds, sessionCookie } from '../dashboard/session-cookie.ts';
import { spendByDay } from '../dashboard/spend-by-day.ts';
import { envelope } from '../http/envelope.ts';
import { clientAddress } from '../http/client-address.ts';
import { forbidden, tooManyRequests, unauthorized, unprocessable } from '../http/errors.ts';
import { parseOr422 } from '../http/parse.ts';
import { readJsonBody } from '../http/request-body.ts';

/** `{"api_key": "gw_…"}` is about 70 bytes; this leaves room for whitespace and nothing more. */
const SIGN_IN_MAX_BYTES = 16 * 1024;
const SignInBody = v.object({
  api_key: v.pipe(v.string(), v.trim(), v.nonEmpty('is required'), v.maxLength(200, 'is too long')),
});
export const SpendQuery = v.object({
  days: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d+$/, 'must be an integer from 1 to 366'),
      v.transform(Number),
      v.minValue(1, 'must be an integer from 1 to 366'),
      v.maxValue(366, 'must be an integer from 1 to 366'),
    ),
    '30',
  ),
});

const sessionView = (session: Session) => ({
  user_id: session.account_id,
  csrf_token: session.csrf_token,
  expires_at: Math.floor(session.expires_at / 1000),
});

const json = (body: unknown, headers: Record<string, string> = {}, status = 200) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers },
  });

/**
 * The account dashboard: the page under /dashboard, its sign-in session, and the one
 * read endpoint it needs beyond docs/api-contract.md.
 *
 * - `GET /dashboard[/…]` — the single page (any sub-path, so its URLs can be bookmarked);
 *   `GET /dashboard/assets/{app.js,styles.css}`.
 * - `POST /dashboard/api/session {api_key}` → Set-Cookie `gw_session` (HttpOnly, SameSite=Strict,
 *   Path=/, a random id — never the key) and `{user_id, csrf_token, expires_at}`. A session cookie
 *   already sent is ended first. JSON only, so no cross-site HTML form can sign a victim in.
 *   A wrong key counts as a failed authentication of the client's address: past
 *   `AUTH_FAILURES_PER_MINUTE` the address gets 429 with `Retry-After` (src/auth/auth-throttle.ts).
 * - `GET /dashboard/api/session` → the same view for the page's cookie (how the page, which cannot
 *   read its HttpOnly cookie, learns its CSRF token); 401 when there is no live session.
 * - `DELETE /dashboard/api/session` (with `x-csrf-token`) → signs out: the session is deleted
 *   from the store on every instance and the cookie cleared.
 * - `GET /v1/account/spend?days=30` (bearer key or session) → `data: [{day, llm, embedding, image, video,
 *   audio}]`, oldest day first: USD spent per UTC day and category, charges minus refunds.
 *
 * Every other action of the page goes through the API a client would use, with the session
 * cookie standing in for the bearer key (see authPlugin).
 */
export function dashboardRoutes(ctx: AppContext) {
  const sessions = dashboardSessions(ctx);
  const throttle = authThrottle(ctx);
  const limits = requestLimits(ctx);
  const assets = new PageAssets(ctx.log);
  const headers = dashboardHeaders(ctx.env.publicUrl, ctx.env.uploadUrl);
  const secure = ctx.env.publicUrl.startsWith('https:');

  const serve = async (name: string, request: Request) => {
    const file = await assets.get(name);
    if (!file) return json({ success: false, code: 404, data: { message: `no dashboard file ${name}` } }, {}, 404);
    if (request.headers.get('if-none-match') === file.etag)
      return new Response(null, { status: 304, headers: { ...headers, etag: file.etag } });
    return new Response(file.body, { headers: { ...headers, 'content-type': file.type, etag: file.etag } });
  };

  const page = new Elysia({ name: 'dashboard-page' })
    .get('/dashboard', ({ request }) => serve('index.html', request))
    .get('/dashboard/assets/:name', ({ params, request }) => serve(params.name, request))
    .get('/dashboard/*', ({ request }) => serve('index.html', request));

  const session = new Elysia({ name: 'dashboard-session', prefix: '/dashboard/api/session' })
    .post(
      '',
      async ({ request }) => {
        // Wrong keys count against the address's failed-authentication budget, as on the API.
        const address = clientAddress(request);
        const wait = throttle.retryAfter(address);
        if (wait > 0) throw tooManyRequests(THROTTLED_MESSAGE, wait);
        if (!(request.headers.get('content-type') ?? '').toLowerCase().startsWith('application/json')) {
          throw unprocessable('send the key as JSON: {"api_key": "…"}');
        }
        // Read by hand: nobody is signed in yet, so the body is small and must arrive quickly.
        const body = await readJsonBody(request, { maxBytes: SIGN_IN_MAX_BYTES, timeoutMs: ctx.env.bodyTimeoutMs });
        const { api_key } = parseOr422(SignInBody, body);
        const auth = await ctx.keys.authenticate(api_key);
        if (!auth) {
          const retryAfter = await throttle.fail(address);
          throw retryAfter > 0 ? tooManyRequests(THROTTLED_MESSAGE, retryAfter) : unauthorized('invalid API key');
        }
        // A sign-in is a request of its key like any other: its expiry, rpm and rate limits hold.
        const limited = limits(auth);
        const refusal = limited instanceof Promise ? await limited : limited;
        if (refusal?.kind === 'expired') throw unauthorized('invalid API key');
        if (refusal?.kind === 'rate') throw tooManyRequests('rate limit exceeded', refusal.retryAfterSeconds);
        for (const previous of readSessionIds(request.headers)) await sessions.end(previous);
        const { id, session: created } = await sessions.create(auth.accountId, api_key);
        ctx.requestAccount.set(request, auth.accountId);
        return json(envelope(sessionView(created)), { 'set-cookie': sessionCookie(id, SESSION_TTL_MS / 1000, secure) });
      },
      { parse: 'none' },
    )
    .get('', async ({ request }) => {
      const found = await sessions.resolveFirst(readSessionIds(request.headers));
      if (!found) throw unauthorized('not signed in');
      ctx.requestAccount.set(request, found.auth.accountId);
      return json(envelope(sessionView(found.session)));
    })
    .delete('', async ({ request }) => {
      const found = await sessions.resolveFirst(readSessionIds(request.headers));
      // A dead or unknown session is already signed out; only a live one needs the CSRF proof.
      if (found && !csrfTokenMatches(found.session, request)) throw forbidden('missing or invalid x-csrf-token header');
      if (found) await sessions.end(found.id);
      return json(envelope({ signed_out: true }), { 'set-cookie': clearedSessionCookie(secure) });
    });

  const spend = new Elysia({ name: 'dashboard-spend' })
    .use(authPlugin(ctx))
    .get('/v1/account/spend', async ({ auth, query }) => {
      const { days } = parseOr422(SpendQuery, query, 'query');
      return envelope(await spendByDay(ctx.db, auth.accountId, days));
    });

  return new Elysia().use(page).use(session).use(spend);
}

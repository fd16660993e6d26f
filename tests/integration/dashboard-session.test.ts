import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { api, createAccount, uniqueEmail } from '../helpers/api.ts';
import { MODES, startGateway, type GatewayProcess } from '../helpers/gateway-process.ts';
import { MAX_SESSIONS_PER_KEY } from '../../src/dashboard/dashboard-sessions.ts';

/**
 * The dashboard's session (issue 6): sign-in with a key gives an HttpOnly, SameSite=Strict cookie
 * holding a random id; the API accepts it in place of the bearer key, with the session's CSRF
 * token on every state-changing call; sessions end on sign-out and when their key is regenerated.
 * Also GET /v1/account/spend, the chart's data.
 */

interface SignedIn {
  cookie: string;
  setCookie: string;
  csrf: string;
}

async function signIn(gw: GatewayProcess, key: string, cookie?: string): Promise<SignedIn> {
  const res = await api(gw, 'POST', '/dashboard/api/session', {
    body: { api_key: key },
    headers: cookie ? { cookie } : {},
  });
  expect(res.status).toBe(200);
  const setCookie = res.headers.get('set-cookie') ?? '';
  return { cookie: setCookie.split(';')[0] as string, setCookie, csrf: res.body.data.csrf_token };
}

const withSession = (s: SignedIn, csrf = true) => ({
  headers: { cookie: s.cookie, ...(csrf ? { 'x-csrf-token': s.csrf } : {}) },
});

/** Polls until `check` holds (the revocation of a key reaches the session cache through pub/sub). */
async function eventually(check: () => Promise<boolean>, ms = 3_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await Bun.sleep(25);
  }
  return check();
}

for (const mode of MODES) {
  describe(`dashboard session and CSRF [${mode.name}]`, () => {
    let gw: GatewayProcess;

    beforeAll(async () => {
      gw = await startGateway(await mode.env('dashsession'));
    }, 30_000);
    afterAll(async () => {
      await gw?.stop();
    });

    test('sign-in sets an HttpOnly, SameSite=Strict cookie that holds no key; the cookie stands in for the key', async () => {
      const { key, userId } = await createAccount(gw, uniqueEmail('dash'), 5);
      const s = await signIn(gw, key);
      expect(s.setCookie).toMatch(/^gw_session=[A-Za-z0-9_-]{43}; /);
      expect(s.setCookie).toContain('; HttpOnly');
      expect(s.setCookie).toContain('; SameSite=Strict');
      expect(s.setCookie).toContain('; Path=/');
      expect(s.setCookie).not.toContain(key);
      expect(s.setCookie).not.toContain(key.slice(3, 20));
      expect(s.csrf).toMatch(/^[A-Za-z0-9_-]{43}$/);

      const me = await api(gw, 'GET', '/v1/account', withSession(s, false));
      expect(me.status).toBe(200);
      expect(me.body.data.user_id).toBe(userId);
      const view = await api(gw, 'GET', '/dashboard/api/session', withSession(s, false));
      expect(view.body.data).toMatchObject({ user_id: userId, csrf_token: s.csrf });
      // A cookie planted beside ours (malformed, or a well-formed id of no session) does not shadow it.
      const planted = `gw_session=x; gw_session=${'A'.repeat(43)}; ${s.cookie}`;
      expect((await api(gw, 'GET', '/v1/account', { headers: { cookie: planted } })).status).toBe(200);
      expect((await api(gw, 'GET', '/dashboard/api/session', { headers: { cookie: planted } })).status).toBe(200);
      // The bearer path is untouched, and a bearer header is never topped up by a cookie.
      expect((await api(gw, 'GET', '/v1/account', { key })).status).toBe(200);
      expect((await api(gw, 'GET', '/v1/account', { key: 'gw_wrong', headers: { cookie: s.cookie } })).status).toBe(
        401,
      );
    });

    test('sign-in refuses bad keys and non-JSON bodies', async () => {
      expect((await api(gw, 'POST', '/dashboard/api/session', { body: { api_key: 'gw_not_a_key' } })).status).toBe(401);
      expect((await api(gw, 'POST', '/dashboard/api/session', { body: {} })).status).toBe(422);
      const form = await api(gw, 'POST', '/dashboard/api/session', {
        rawBody: 'api_key=x',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect(form.status).toBe(422);
      expect(
        (
          await api(gw, 'GET', '/v1/account', {
            headers: { cookie: 'gw_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
          })
        ).status,
      ).toBe(401);
    });

    test("a sign-in keeps to its key's limits: an expired key is refused and ends its sessions, rpm counts, sign-ins per account are bounded", async () => {
      const { key } = await createAccount(gw, uniqueEmail('dash-limits'), 5);
      // rpm 1: one API call or sign-in a minute.
      const slow = await api(gw, 'POST', '/v1/keys', { key, body: { name: 'rpm 1', rpm: 1 } });
      expect(slow.status).toBe(200);
      await signIn(gw, slow.body.data.key);
      const again = await api(gw, 'POST', '/dashboard/api/session', { body: { api_key: slow.body.data.key } });
      expect(again.status).toBe(429);
      expect(again.headers.get('retry-after')).toMatch(/^\d+$/);

      // An expiring key: its session works until the expiry, then neither it nor a new sign-in does.
      const expiresAt = Math.ceil(Date.now() / 1000) + 2;
      const brief = await api(gw, 'POST', '/v1/keys', { key, body: { name: 'brief', expires_at: expiresAt } });
      expect(brief.status).toBe(200);
      const s = await signIn(gw, brief.body.data.key);
      expect((await api(gw, 'GET', '/dashboard/api/session', withSession(s, false))).status).toBe(200);
      await Bun.sleep(Math.max(0, expiresAt * 1000 - Date.now()) + 100);
      expect((await api(gw, 'GET', '/dashboard/api/session', withSession(s, false))).status).toBe(401);
      expect((await api(gw, 'GET', '/v1/account', withSession(s, false))).status).toBe(401);
      expect((await api(gw, 'POST', '/dashboard/api/session', { body: { api_key: brief.body.data.key } })).status).toBe(
        401,
      );

      // Every session stays in the shared store for 8 hours: a key keeps at most MAX_SESSIONS_PER_KEY,
      // its oldest ended by the next sign-in; another key's sign-ins never end the owner's.
      const { key: busy } = await createAccount(gw, uniqueEmail('dash-many'), 5);
      const owner = await signIn(gw, busy);
      const other = await api(gw, 'POST', '/v1/keys', {
        key: busy,
        body: { name: 'handed out', models: ['sandbox/*'] },
      });
      const sessions: SignedIn[] = [];
      for (let i = 0; i < MAX_SESSIONS_PER_KEY + 5; i++) sessions.push(await signIn(gw, other.body.data.key));
      const alive = async (x: SignedIn) =>
        (await api(gw, 'GET', '/dashboard/api/session', withSession(x, false))).status === 200;
      expect(await Promise.all(sessions.slice(0, 5).map(alive))).toEqual([false, false, false, false, false]);
      expect((await Promise.all(sessions.slice(5).map(alive))).every(Boolean)).toBe(true);
      expect(await alive(owner)).toBe(true);
    });

    test('answers carrying a secret are never cached: a created key, a rotated key, the webhook secret', async () => {
      const { key } = await createAccount(gw, uniqueEmail('dash-nostore'), 5);
      const s = await signIn(gw, key);
      const made = await api(gw, 'POST', '/v1/keys', { ...withSession(s), body: { name: 'shown once' } });
      const signing = await api(gw, 'GET', '/v1/account/webhook-signing', withSession(s, false));
      const listed = await api(gw, 'GET', '/v1/keys', withSession(s, false));
      for (const res of [made, signing, listed]) {
        expect(res.status).toBe(200);
        expect(res.headers.get('cache-control')).toBe('no-store');
      }
      const rotated = await api(gw, 'POST', '/v1/account/api-key/regenerate', withSession(s));
      expect(rotated.status).toBe(200);
      expect(rotated.headers.get('cache-control')).toBe('no-store');
    });

    test("a state-changing call with the cookie needs the session's own CSRF token (403 otherwise)", async () => {
      const { key } = await createAccount(gw, uniqueEmail('csrf'), 5);
      const s = await signIn(gw, key);
      const other = await signIn(gw, (await createAccount(gw, uniqueEmail('csrf-other'), 5)).key);
      const body = { enabled: true };
      const none = await api(gw, 'POST', '/v1/account/webhook-signing', { body, ...withSession(s, false) });
      expect(none.status).toBe(403);
      expect(none.body).toMatchObject({ success: false, code: 403 });
      // Another session's valid token is not this session's token.
      expect(
        (
          await api(gw, 'POST', '/v1/account/webhook-signing', {
            body,
            headers: { cookie: s.cookie, 'x-csrf-token': other.csrf },
          })
        ).status,
      ).toBe(403);
      expect(
        (
          await api(gw, 'POST', '/v1/tasks', {
            body: { model: 'sandbox/image', input: { prompt: 'x' } },
            ...withSession(s, false),
          })
        ).status,
      ).toBe(403);
      expect(
        (
          await api(gw, 'POST', '/v1/chat/completions', {
            body: { model: 'sandbox/echo', messages: [] },
            ...withSession(s, false),
          })
        ).status,
      ).toBe(403);
      // Nothing changed.
      expect((await api(gw, 'GET', '/v1/account/webhook-signing', { key })).body.data.enabled).toBe(false);

      const ok = await api(gw, 'POST', '/v1/account/webhook-signing', { body, ...withSession(s) });
      expect(ok.status).toBe(200);
      expect(ok.body.data.enabled).toBe(true);
    });

    test('regenerating the key ends the sessions made from it; signing in with the new key continues', async () => {
      const { key } = await createAccount(gw, uniqueEmail('regen'), 5);
      const here = await signIn(gw, key);
      const elsewhere = await signIn(gw, key);
      const regen = await api(gw, 'POST', '/v1/account/api-key/regenerate', withSession(here));
      expect(regen.status).toBe(200);
      const newKey = regen.body.data.api_key as string;
      expect((await api(gw, 'GET', '/v1/account', { key })).status).toBe(401);
      expect(
        await eventually(
          async () => (await api(gw, 'GET', '/v1/account', withSession(elsewhere, false))).status === 401,
        ),
      ).toBe(true);
      expect((await api(gw, 'GET', '/v1/account', withSession(here, false))).status).toBe(401);

      // What the page does right after regenerating: sign in with the new key, sending the old cookie.
      const continued = await signIn(gw, newKey, here.cookie);
      expect(continued.cookie).not.toBe(here.cookie);
      expect((await api(gw, 'GET', '/v1/account', withSession(continued, false))).status).toBe(200);

      // Regenerated elsewhere (a bearer client) → the session made from that key ends too.
      const byBearer = await api(gw, 'POST', '/v1/account/api-key/regenerate', { key: newKey });
      expect(byBearer.status).toBe(200);
      expect(
        await eventually(
          async () => (await api(gw, 'GET', '/v1/account', withSession(continued, false))).status === 401,
        ),
      ).toBe(true);
    });

    test('sign-out needs the token, ends the session and clears the cookie', async () => {
      const { key } = await createAccount(gw, uniqueEmail('signout'), 5);
      const s = await signIn(gw, key);
      expect((await api(gw, 'DELETE', '/dashboard/api/session', withSession(s, false))).status).toBe(403);
      expect((await api(gw, 'GET', '/v1/account', withSession(s, false))).status).toBe(200);
      const out = await api(gw, 'DELETE', '/dashboard/api/session', withSession(s));
      expect(out.status).toBe(200);
      expect(out.headers.get('set-cookie')).toMatch(/^gw_session=; Path=\/; Max-Age=0; HttpOnly; SameSite=Strict/);
      expect((await api(gw, 'GET', '/v1/account', withSession(s, false))).status).toBe(401);
      expect((await api(gw, 'GET', '/dashboard/api/session', withSession(s, false))).status).toBe(401);
      // The key itself still works: signing out is not revoking.
      expect((await api(gw, 'GET', '/v1/account', { key })).status).toBe(200);
    });

    test('GET /v1/account/spend: charges minus refunds per UTC day and category', async () => {
      const { key } = await createAccount(gw, uniqueEmail('spend'), 5);
      const create = async (body: object) => {
        const res = await api(gw, 'POST', '/v1/tasks', { key, body });
        expect(res.status).toBe(200);
        return res.body.data.task_id as string;
      };
      // Ceiling of 3 images charged ($0.03), 2 made: $0.01 refunded at completion.
      const image = await create({
        model: 'sandbox/image',
        input: { prompt: 'fox', max_sequential_images: 3, delay_ms: 0 },
      });
      // A failed task is refunded in full: nets to zero.
      const failed = await create({ model: 'sandbox/speech', input: { text: 'hello there', fail: true, delay_ms: 0 } });
      const chat = await api(gw, 'POST', '/v1/chat/completions', {
        key,
        body: { model: 'sandbox/echo', messages: [{ role: 'user', content: 'one two' }] },
      });
      expect(chat.status).toBe(200);
      const llmCost = (2 * 1 + 3 * 2) / 1_000_000;

      let days: any[] = [];
      const settled = await eventually(async () => {
        const tasks = await Promise.all([image, failed].map((id) => api(gw, 'GET', `/v1/tasks/${id}`, { key })));
        const res = await api(gw, 'GET', '/v1/account/spend', { key });
        days = res.body.data;
        return tasks.every((t) => t.body.data.status !== 'processing') && (days.at(-1)?.llm ?? 0) > 0;
      }, 15_000);
      expect(settled).toBe(true);
      expect(days).toHaveLength(30);
      const today = new Date().toISOString().slice(0, 10);
      expect(days.at(-1).day).toBe(today);
      expect(days[0].day).toBe(new Date(Date.now() - 29 * 86_400_000).toISOString().slice(0, 10));
      expect(days.at(-1).image).toBeCloseTo(0.02, 10);
      expect(days.at(-1).audio).toBe(0);
      expect(days.at(-1).video).toBe(0);
      expect(days.at(-1).embedding).toBe(0);
      expect(days.at(-1).llm).toBeCloseTo(llmCost, 12);
      for (const day of days.slice(0, -1))
        expect(day).toEqual({ day: day.day, llm: 0, embedding: 0, image: 0, video: 0, audio: 0 });

      const week = await api(gw, 'GET', '/v1/account/spend?days=7', { key });
      expect(week.body.data).toHaveLength(7);
      expect((await api(gw, 'GET', '/v1/account/spend?days=0', { key })).status).toBe(422);
      expect((await api(gw, 'GET', '/v1/account/spend?days=400', { key })).status).toBe(422);
      expect((await api(gw, 'GET', '/v1/account/spend')).status).toBe(401);
      // Only the caller's own ledger.
      const other = await createAccount(gw, uniqueEmail('spend-other'), 5);
      const empty = await api(gw, 'GET', '/v1/account/spend', { key: other.key });
      expect(empty.body.data.every((d: any) => d.llm === 0 && d.image === 0)).toBe(true);
    }, 30_000);

    test('the page and its assets are served with a strict CSP', async () => {
      for (const path of [
        '/dashboard',
        '/dashboard/tasks/some-id',
        '/dashboard/assets/app.js',
        '/dashboard/assets/styles.css',
      ]) {
        const res = await fetch(`${gw.url}${path}`);
        expect(res.status).toBe(200);
        expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
        expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
        expect(res.headers.get('x-frame-options')).toBe('DENY');
        const text = await res.text();
        if (path.endsWith('.js')) expect(text.length).toBeGreaterThan(1000);
        if (!path.includes('assets')) expect(text).toContain('/dashboard/assets/app.js');
      }
      expect((await fetch(`${gw.url}/dashboard/assets/nope.js`)).status).toBe(404);
    });
  });
}

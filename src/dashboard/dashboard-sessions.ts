import { timingSafeEqual } from 'node:crypto';
import type { AppContext } from '../app/context.ts';
import type { AuthContext } from '../auth/key-cache.ts';
import { hashApiKey } from '../auth/api-keys.ts';
import { ActiveKeys } from './active-keys.ts';

/** How long a sign-in lasts; fixed from sign-in (not sliding), so a stolen cookie ages out. */
export const SESSION_TTL_MS = 8 * 60 * 60_000;

export interface Session {
  account_id: number;
  /** SHA-256 of the API key the session was made from: the session ends when that key is revoked. */
  key_hash: string;
  csrf_token: string;
  /** Unix ms. */
  expires_at: number;
}

export interface SessionAuth {
  auth: AuthContext;
  session: Session;
  id: string;
}

const randomToken = () => Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url');
/**
 * Live sessions one key keeps: a sign-in past this ends that key's oldest session. Each session
 * stays in the shared store for its 8 hours, so sign-ins without end would fill it for every
 * account; refusing them instead let any key of an account lock the account's owner out.
 */
export const MAX_SESSIONS_PER_KEY = 20;
/** A key's sign-in count, and the session (its hash) of each sign-in by number. */
const signInSeqKey = (keyHash: string) => `dashboard:key-seq:${keyHash}`;
const signInKey = (keyHash: string, seq: number) => `dashboard:key-sign-in:${keyHash}:${seq}`;

/** The store holds sessions under a hash of their id: a dump of Redis yields no usable cookie. */
const storeKey = (id: string) => sessionKeyOfHash(hashApiKey(id));
const sessionKeyOfHash = (idHash: string) => `dashboard:session:${idHash}`;

/**
 * Dashboard sign-in sessions, kept in the shared store with a TTL so any instance serves them.
 * A session is only as good as the key it came from: it ends when that key is regenerated. The
 * dashboard's own "regenerate" continues the session by signing in again with the new key it
 * was just shown (see POST /dashboard/api/session), which retires the old session id.
 */
export class DashboardSessions {
  private readonly activeKeys: ActiveKeys;

  constructor(private readonly ctx: Pick<AppContext, 'db' | 'store'>) {
    this.activeKeys = new ActiveKeys(ctx.db, ctx.store);
  }

  async create(accountId: number, apiKey: string): Promise<{ id: string; session: Session }> {
    const id = randomToken();
    const session: Session = {
      account_id: accountId,
      key_hash: hashApiKey(apiKey),
      csrf_token: randomToken(),
      expires_at: Date.now() + SESSION_TTL_MS,
    };
    await this.ctx.store.set(storeKey(id), JSON.stringify(session), SESSION_TTL_MS);
    // Sign-in n of a key ends sign-in n - MAX's session. Both sides are checked, so sign-ins at
    // once cannot miss each other: n counts (atomically) then reads n - MAX's record, and every
    // sign-in writes its record then reads the count, ending itself if n has already passed it.
    // Records hold the session's hash, as the store does, never the cookie's value.
    const seqKey = signInSeqKey(session.key_hash);
    const seq = await this.ctx.store.incr(seqKey, 1, SESSION_TTL_MS);
    const idHash = hashApiKey(id);
    await this.ctx.store.set(signInKey(session.key_hash, seq), idHash, SESSION_TTL_MS);
    const older = await this.ctx.store.get(signInKey(session.key_hash, seq - MAX_SESSIONS_PER_KEY));
    if (older) await this.ctx.store.del(sessionKeyOfHash(older));
    if (Number((await this.ctx.store.get(seqKey)) ?? seq) >= seq + MAX_SESSIONS_PER_KEY)
      await this.ctx.store.del(sessionKeyOfHash(idHash));
    return { id, session };
  }

  async end(id: string): Promise<void> {
    await this.ctx.store.del(storeKey(id));
  }

  /** The first of `ids` that is a live session (readSessionIds); null when none is. */
  async resolveFirst(ids: readonly string[]): Promise<SessionAuth | null> {
    for (const id of ids) {
      const found = await this.resolve(id);
      if (found) return found;
    }
    return null;
  }

  /** The live session of this id whose key is still active, with the auth it stands for; null otherwise. */
  async resolve(id: string): Promise<SessionAuth | null> {
    const raw = await this.ctx.store.get(storeKey(id));
    if (!raw) return null;
    const session = JSON.parse(raw) as Session;
    if (session.expires_at <= Date.now()) return null;
    const auth = await this.activeKeys.lookup(session.key_hash);
    if (!auth || auth.accountId !== session.account_id) return null;
    // A key that expired ends its sessions, as it is refused on the API (docs/keys.md).
    if (auth.policy?.expiresAt != null && Date.now() >= auth.policy.expiresAt) return null;
    return { auth, session, id };
  }
}

/**
 * The CSRF check of every state-changing request made with the cookie: the `x-csrf-token` header
 * must equal the token stored in the session (compared in constant time). A token merely echoed
 * from a cookie (double submit) would not do: the page's origin is the only place that can read
 * this one, from GET /dashboard/api/session.
 */
export function csrfTokenMatches(session: Session, request: Request): boolean {
  const given = request.headers.get('x-csrf-token');
  if (!given) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(session.csrf_token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Methods that change nothing and so need no CSRF token. */
export const isSafeMethod = (method: string) => method === 'GET' || method === 'HEAD' || method === 'OPTIONS';

const perContext = new WeakMap<object, DashboardSessions>();

/**
 * One DashboardSessions per AppContext, shared by the auth plugin of every route module and the
 * dashboard routes, so there is one revocation subscription per instance.
 */
export function dashboardSessions(ctx: Pick<AppContext, 'db' | 'store'>): DashboardSessions {
  let sessions = perContext.get(ctx);
  if (!sessions) {
    sessions = new DashboardSessions(ctx);
    perContext.set(ctx, sessions);
  }
  return sessions;
}

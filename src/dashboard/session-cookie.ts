/**
 * The dashboard's session cookie. It carries only a random session id: never the API key, so a
 * leaked cookie jar or log line cannot be replayed as a key, and the key can be rotated without
 * the browser ever storing it. HttpOnly keeps it from page script; SameSite=Strict keeps it off
 * every cross-site request; Path=/ because the page calls the API under /v1.
 */
export const SESSION_COOKIE = 'gw_session';

/** Most session cookies of one request looked up: a browser sends one, a planted one adds another. */
const MAX_SESSION_COOKIES = 3;

/**
 * The request's well-formed `gw_session` values, in order (at most three). A cookie planted beside
 * ours (from a sibling subdomain, or over plain http) comes first in the header and would shadow
 * the real session if only the first were read: each is tried, and a value that cannot be one of
 * our ids (base64url) is skipped, never looked up.
 */
export function readSessionIds(headers: Headers): string[] {
  const header = headers.get('cookie');
  if (!header) return [];
  const ids: string[] = [];
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1 || part.slice(0, eq).trim() !== SESSION_COOKIE) continue;
    const value = part.slice(eq + 1).trim();
    if (/^[A-Za-z0-9_-]{20,100}$/.test(value) && !ids.includes(value)) ids.push(value);
    if (ids.length === MAX_SESSION_COOKIES) break;
  }
  return ids;
}

/** `Secure` whenever the gateway is reached over https; plain http stays usable on localhost. */
export function sessionCookie(id: string, maxAgeSeconds: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${id}; Path=/; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

export function clearedSessionCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

/**
 * The dashboard's session cookie. It carries only a random session id: never the API key, so a
 * leaked cookie jar or log line cannot be replayed as a key, and the key can be rotated without
 * the browser ever storing it. HttpOnly keeps it from page script; SameSite=Strict keeps it off
 * every cross-site request; Path=/ because the page calls the API under /v1.
 */
export const SESSION_COOKIE = 'gw_session';

export function readSessionId(headers: Headers): string | undefined {
  const header = headers.get('cookie');
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    if (part.slice(0, eq).trim() === SESSION_COOKIE) {
      const value = part.slice(eq + 1).trim();
      // Our ids are base64url; anything else cannot be one of ours and is not looked up.
      return /^[A-Za-z0-9_-]{20,100}$/.test(value) ? value : undefined;
    }
  }
  return undefined;
}

/** `Secure` whenever the gateway is reached over https; plain http stays usable on localhost. */
export function sessionCookie(id: string, maxAgeSeconds: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${id}; Path=/; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

export function clearedSessionCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

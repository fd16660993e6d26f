/**
 * The page's view of its sign-in session. The cookie is HttpOnly, so the page never sees it; it
 * only keeps the CSRF token the server handed out for it, to send on every state-changing call.
 */
export interface SessionInfo {
  user_id: number;
  csrf_token: string;
  expires_at: number;
}

let current: SessionInfo | null = null;

export const session = () => current;
export const csrfToken = () => current?.csrf_token;

async function sessionCall(method: string, body?: unknown): Promise<Response> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && current) headers['x-csrf-token'] = current.csrf_token;
  return fetch('/dashboard/api/session', {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
  });
}

/** Asks the server which session the cookie holds; null when signed out. */
export async function loadSession(): Promise<SessionInfo | null> {
  const res = await sessionCall('GET');
  current = res.ok ? ((await res.json()) as { data: SessionInfo }).data : null;
  return current;
}

/** Signs in with an API key; the answer's message is shown on failure. */
export async function signIn(apiKey: string): Promise<SessionInfo> {
  const res = await sessionCall('POST', { api_key: apiKey });
  const body = (await res.json().catch(() => ({}))) as { data?: SessionInfo & { message?: string } };
  if (!res.ok || !body.data) throw new Error(body.data?.message ?? `sign-in failed (${res.status})`);
  current = body.data;
  return current;
}

export async function signOut(): Promise<void> {
  await sessionCall('DELETE').catch(() => undefined);
  current = null;
}

/** Forgets the session locally, when the server said it is gone (401). */
export function sessionEnded(): void {
  current = null;
}

import { csrfToken, sessionEnded } from './session.ts';

/** An API answer that was not a success, with the server's own message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Fired when the API answers 401: the session ended (expired, signed out, or its key regenerated). */
export const SESSION_ENDED_EVENT = 'dashboard:session-ended';

export interface CallOptions {
  body?: unknown;
  signal?: AbortSignal;
}

/**
 * One call of the gateway's public API, authenticated by the session cookie. Every state-changing
 * call carries the session's CSRF token, as the server requires.
 */
export async function call(method: string, path: string, opts: CallOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const token = csrfToken();
  if (method !== 'GET' && token) headers['x-csrf-token'] = token;
  const res = await fetch(path, {
    method,
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    credentials: 'same-origin',
    signal: opts.signal,
  });
  if (res.status === 401) {
    sessionEnded();
    window.dispatchEvent(new Event(SESSION_ENDED_EVENT));
  }
  return res;
}

/** The message of an error body, whichever shape the endpoint answers in (envelope or OpenAI-style). */
export async function errorOf(res: Response): Promise<ApiError> {
  const body = (await res.json().catch(() => null)) as {
    data?: { message?: string };
    error?: { message?: string };
  } | null;
  return new ApiError(res.status, body?.data?.message ?? body?.error?.message ?? `${res.status} ${res.statusText}`);
}

/** The JSON body of a successful call. */
export async function json<T>(method: string, path: string, opts?: CallOptions): Promise<T> {
  const res = await call(method, path, opts);
  if (!res.ok) throw await errorOf(res);
  return (await res.json()) as T;
}

/** `data` of an envelope answer. */
export async function data<T>(method: string, path: string, opts?: CallOptions): Promise<T> {
  return (await json<{ data: T }>(method, path, opts)).data;
}

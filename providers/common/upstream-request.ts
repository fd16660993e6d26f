import { UpstreamError, kindForStatus, upstreamMessage } from './upstream-error.ts';
import type { RetryPolicy } from './retry-policy.ts';
import type { UpstreamHealth } from './upstream-health.ts';
import { observeAttempt } from './upstream-observer.ts';
import { jsonTextTooDeep } from '../../translators/common/json-text-depth.ts';
import { readUpstreamText, upstreamErrorText } from './upstream-body.ts';
import { HeadTimeout, upstreamTransport } from './upstream-transport.ts';

/** Longest `Retry-After` honoured inside one call; a longer one is left to the caller's schedule. */
const MAX_INLINE_WAIT_MS = 5_000;
const RETRYABLE = (status: number) => status === 429 || status === 408 || status >= 500;

/**
 * OpenAI answers one request above the organisation's per-minute token limit with 429 "Request
 * too large for … on tokens per min": no wait or retry changes it. It is the request's own fault
 * at this deployment (400 with the upstream's words when no other takes it), so it is neither
 * retried nor counted against the deployment: counted, one tenant's oversized requests cooled a
 * deployment every tenant shares.
 * @see https://platform.openai.com/docs/guides/rate-limits
 */
const tooLargeForRateLimit = (status: number, message: string) =>
  status === 429 && /^request too large\b/i.test(message.trim());

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}

function retryAfterSeconds(headers: Headers): number | undefined {
  const raw = headers.get('retry-after');
  if (raw === null) return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds;
  const date = Date.parse(raw);
  return Number.isFinite(date) ? Math.max(0, (date - Date.now()) / 1000) : undefined;
}

export interface UpstreamCall {
  method: 'GET' | 'POST' | 'PUT';
  url: string;
  headers: Record<string, string>;
  body?: unknown;
  policy: RetryPolicy;
  signal: AbortSignal;
  health?: UpstreamHealth;
  /** Told of every attempt made (retries included), so callers can report how many there were. */
  onAttempt?: () => void;
  /** Error answers handed back as they are (not retried, not thrown): the caller reads them. */
  passStatus?: (status: number, headers: Headers) => boolean;
  /** Reads an error body's message; defaults to OpenAI-style `error.message`, `message`, `detail`. */
  message?: (body: string, status: number) => string;
}

/** `detail` (FastAPI-style, a string or a list of `{msg}`) besides the usual `error.message`. */
export function defaultMessage(body: string, status: number): string {
  try {
    const parsed = JSON.parse(body) as { detail?: unknown; title?: unknown };
    if (typeof parsed.detail === 'string') return parsed.detail;
    if (Array.isArray(parsed.detail)) {
      const parts = parsed.detail.map((d: { msg?: unknown; loc?: unknown }) =>
        typeof d?.msg === 'string'
          ? Array.isArray(d.loc)
            ? `${d.loc.join('.')}: ${d.msg}`
            : d.msg
          : JSON.stringify(d),
      );
      if (parts.length) return parts.join('; ');
    }
  } catch {
    // not JSON: the generic reader below copes
  }
  return upstreamMessage(body, status);
}

/**
 * One JSON call to an upstream with retries: connect errors, timeouts, 408, 429 and 5xx are
 * retried up to `policy.maxRetries` times with exponential backoff, honouring a short
 * `Retry-After`. Answers the 2xx response; anything else becomes an UpstreamError (with the
 * upstream's status, message and `Retry-After`). Every outcome is recorded on `health`.
 */
export async function upstreamRequest(call: UpstreamCall): Promise<Response> {
  const { policy, signal } = call;
  const payload = call.body === undefined ? undefined : JSON.stringify(call.body);
  let lastError: UpstreamError | undefined;
  for (let attempt = 0; attempt <= policy.maxRetries; attempt++) {
    if (attempt > 0) {
      const backoff = (policy.baseDelayMs ?? 200) * 2 ** (attempt - 1) * (0.5 + Math.random());
      const asked = lastError?.retryAfterSeconds;
      if (asked !== undefined && asked * 1000 > MAX_INLINE_WAIT_MS) break;
      await sleep(asked !== undefined ? asked * 1000 : backoff, signal);
    }
    call.onAttempt?.();
    let response: Response;
    const observed = observeAttempt(call.method, call.url);
    try {
      response = await upstreamTransport(call.url, {
        method: call.method,
        headers: {
          ...(payload !== undefined ? { 'content-type': 'application/json' } : {}),
          accept: 'application/json',
          ...call.headers,
          ...observed?.headers,
        },
        body: payload,
        signal,
        headTimeoutMs: policy.timeoutMs,
      });
    } catch (err) {
      const timedOut = err instanceof HeadTimeout;
      observed?.end({ error: signal.aborted ? 'cancelled' : timedOut ? 'timeout' : 'unreachable' });
      if (signal.aborted) throw signal.reason ?? err;
      lastError = timedOut
        ? new UpstreamError('timeout', `upstream did not answer within ${policy.timeoutMs} ms`)
        : new UpstreamError('unreachable', `upstream unreachable: ${(err as Error).message}`);
      call.health?.failed(lastError.message);
      continue;
    }
    observed?.end({ status: response.status });
    if (response.ok || call.passStatus?.(response.status, response.headers)) {
      call.health?.succeeded();
      return response;
    }
    const text = await upstreamErrorText(response);
    const message = (call.message ?? defaultMessage)(text, response.status);
    if (tooLargeForRateLimit(response.status, message)) {
      call.health?.succeeded();
      throw new UpstreamError('too_large_for_limit', message, response.status);
    }
    const kind = kindForStatus(response.status);
    lastError = new UpstreamError(kind, message, response.status, retryAfterSeconds(response.headers));
    if (RETRYABLE(response.status) || kind === 'auth') call.health?.failed(`${response.status} ${lastError.message}`);
    else call.health?.succeeded();
    if (!RETRYABLE(response.status)) throw lastError;
  }
  throw lastError ?? new UpstreamError('unreachable', 'upstream unreachable');
}

/**
 * Deepest nesting an upstream's JSON answer may have. A media API's answer is a few levels deep
 * (with the client's input, itself at most 64, echoed inside); one far deeper would overflow the
 * recursive walks that look for its files.
 */
export const MAX_UPSTREAM_JSON_DEPTH = 128;

/**
 * The JSON body of a 2xx answer. A body that is not JSON is an upstream fault (retried); one
 * nested past `MAX_UPSTREAM_JSON_DEPTH` is `malformed`: the same step would get it again.
 */
export async function jsonBody<T>(response: Response): Promise<T> {
  const text = await readUpstreamText(response);
  if (jsonTextTooDeep(text, MAX_UPSTREAM_JSON_DEPTH))
    throw new UpstreamError(
      'malformed',
      `upstream answered ${response.status} with JSON nested deeper than ${MAX_UPSTREAM_JSON_DEPTH} levels`,
      response.status,
    );
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new UpstreamError(
      'server_error',
      `upstream answered ${response.status} with a body that is not JSON: ${text.slice(0, 200)}`,
      response.status,
    );
  }
}

/** Transient: worth trying the same step again later (the task runner retries a throwing step). */
export function isTransient(err: unknown): boolean {
  return (
    err instanceof UpstreamError &&
    (err.kind === 'unreachable' ||
      err.kind === 'timeout' ||
      err.kind === 'rate_limited' ||
      err.kind === 'server_error' ||
      err.upstreamStatus === 408)
  );
}

import { UpstreamError, kindForStatus, upstreamMessage } from './upstream-error.ts';

export interface RetryPolicy {
  /** Extra attempts after the first. */
  maxRetries: number;
  /** Time allowed until the upstream's response headers arrive, per attempt. */
  timeoutMs: number;
  /** First backoff; doubles each retry, with jitter. */
  baseDelayMs?: number;
}

const RETRYABLE = (status: number) => status === 429 || status === 408 || status >= 500;

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason);
    }, { once: true });
  });
}

/**
 * POSTs JSON to an upstream. Connect errors, header timeouts, 429 and 5xx are retried with
 * exponential backoff (honouring a short `retry-after`); anything else, or the last failure,
 * becomes an UpstreamError. Once headers arrive the body belongs to the caller, bounded only by
 * the client's `signal` — so a client disconnect cancels the upstream request at once.
 */
export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string>,
  policy: RetryPolicy,
  signal: AbortSignal,
): Promise<Response> {
  const payload = JSON.stringify(body);
  let lastError: UpstreamError | undefined;
  for (let attempt = 0; attempt <= policy.maxRetries; attempt++) {
    if (attempt > 0) {
      const backoff = (policy.baseDelayMs ?? 200) * 2 ** (attempt - 1) * (0.5 + Math.random());
      const wait = lastError?.retryAfterSeconds !== undefined ? Math.min(lastError.retryAfterSeconds * 1000, 5000) : backoff;
      await sleep(wait, signal);
    }
    // The timer bounds the wait for headers only; it is cleared before the body streams.
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), policy.timeoutMs);
    const attemptSignal = AbortSignal.any([signal, timeout.signal]);
    let response: Response;
    try {
      response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: payload, signal: attemptSignal, redirect: 'error' });
    } catch (err) {
      if (signal.aborted) throw signal.reason ?? err;
      lastError = timeout.signal.aborted
        ? new UpstreamError('timeout', `upstream did not answer within ${policy.timeoutMs} ms`)
        : new UpstreamError('unreachable', `upstream unreachable: ${(err as Error).message}`);
      continue;
    } finally {
      clearTimeout(timer);
    }
    if (response.ok) return response;
    const text = await response.text().catch(() => '');
    const retryAfter = Number(response.headers.get('retry-after'));
    lastError = new UpstreamError(kindForStatus(response.status), upstreamMessage(text, response.status), response.status, Number.isFinite(retryAfter) && response.headers.has('retry-after') ? retryAfter : undefined);
    if (!RETRYABLE(response.status)) throw lastError;
  }
  throw lastError ?? new UpstreamError('unreachable', 'upstream unreachable');
}

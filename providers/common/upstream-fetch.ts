import type { RetryPolicy } from './retry-policy.ts';
import { upstreamRequest } from './upstream-request.ts';

/**
 * POSTs JSON to an LLM upstream through the one retry loop every adapter uses (upstreamRequest):
 * connect errors, header timeouts, 408, 429 and 5xx are retried with backoff before the first
 * byte; the timer bounds the wait for headers only, so once they arrive the body belongs to the
 * caller, bounded by the client's `signal` — a client disconnect cancels the upstream at once.
 */
export function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string>,
  policy: RetryPolicy,
  signal: AbortSignal,
  onAttempt?: () => void,
): Promise<Response> {
  return upstreamRequest({
    method: 'POST',
    url,
    body,
    policy,
    signal,
    onAttempt,
    headers: { accept: 'application/json, text/event-stream', ...headers },
  });
}

import type { JobStep } from '../types.ts';
import { UpstreamError } from './upstream-error.ts';

/** First wait after a 429 that named no `Retry-After`; doubles per consecutive 429. */
const RATE_LIMIT_BASE_MS = 2_000;
const RATE_LIMIT_MAX_MS = 60_000;

/**
 * What an upstream failure during a job step means for the task:
 * - the upstream refused the request (4xx), or answered with what the gateway cannot use
 *   (`malformed`, which another try would get again): the task fails with the message;
 * - rate limited (429) after the in-call retries: the same step again once `Retry-After` has
 *   passed (`again(delayMs)`), without counting as an error of the task;
 * - anything transient (5xx, timeouts, unreachable) or not an upstream error: rethrown, and the
 *   task runner retries the step with its own backoff until the job's deadline.
 */
export function stepForUpstreamError(
  err: unknown,
  label: string,
  again: (delayMs: number) => JobStep,
  rateLimitedTimes = 0,
): JobStep {
  if (!(err instanceof UpstreamError)) throw err;
  if (err.kind === 'rate_limited') {
    const asked =
      err.retryAfterSeconds !== undefined ? err.retryAfterSeconds * 1000 : RATE_LIMIT_BASE_MS * 2 ** rateLimitedTimes;
    return again(Math.min(RATE_LIMIT_MAX_MS, Math.max(0, asked)));
  }
  if (
    err.kind === 'bad_request' ||
    err.kind === 'too_large_for_limit' ||
    err.kind === 'not_found' ||
    err.kind === 'auth' ||
    err.kind === 'malformed'
  ) {
    if (err.upstreamStatus === 408) throw err;
    return { state: 'failed', message: `${label}: ${err.message}`, detail: { upstream_status: err.upstreamStatus } };
  }
  throw err;
}

/**
 * `stepForUpstreamError` for a job whose operation counts its consecutive 429s in `limited`: a
 * rate-limited step keeps the operation, one more 429 counted, and polls again after the wait.
 */
export function stepForOperationError<Op extends { limited?: number }>(err: unknown, label: string, op: Op): JobStep {
  const limited = op.limited ?? 0;
  const again = (delayMs: number): JobStep => ({
    state: 'running',
    operation: { ...op, limited: limited + 1 },
    pollAfterMs: delayMs,
  });
  return stepForUpstreamError(err, label, again, limited);
}

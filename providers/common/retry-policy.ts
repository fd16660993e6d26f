/** How an upstream call is retried before its first byte (provider settings `max_retries`, `timeout_ms`). */
export interface RetryPolicy {
  /** Extra attempts after the first. */
  maxRetries: number;
  /** Time allowed until the upstream's response headers arrive, per attempt. */
  timeoutMs: number;
  /** First backoff; doubles each retry, with jitter. */
  baseDelayMs?: number;
}

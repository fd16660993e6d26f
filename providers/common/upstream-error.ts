/**
 * An upstream failure before any byte reached the client, after retries. `kind` decides the
 * status the client sees; the upstream's own message is kept for the client and the logs.
 */
export type UpstreamErrorKind =
  | 'unreachable'
  | 'timeout'
  | 'rate_limited'
  | 'server_error'
  /** A 2xx answer the gateway cannot use and would get again (nested past any walk): not retried. */
  | 'malformed'
  | 'bad_request'
  /**
   * One request too large for the upstream organisation's per-minute limit (OpenAI's 429
   * "Request too large"): the request's own fault at this deployment, which another may take.
   */
  | 'too_large_for_limit'
  | 'auth'
  | 'not_found';

export class UpstreamError extends Error {
  override name = 'UpstreamError';
  constructor(
    readonly kind: UpstreamErrorKind,
    message: string,
    /** The upstream's HTTP status, 0 when there was no HTTP answer. */
    readonly upstreamStatus = 0,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }

  /** The status the gateway answers with. */
  get status(): number {
    switch (this.kind) {
      case 'rate_limited':
        return 429;
      case 'timeout':
        return 504;
      case 'bad_request':
      case 'too_large_for_limit':
        return 400;
      case 'not_found':
        return 404;
      case 'unreachable':
      case 'server_error':
      case 'malformed':
      case 'auth': // our credentials, not the client's: a gateway problem
        return 502;
      default: {
        const exhaustive: never = this.kind;
        throw new Error(`unknown upstream error kind ${exhaustive}`);
      }
    }
  }
}

export function kindForStatus(status: number): UpstreamErrorKind {
  if (status === 429) return 'rate_limited';
  if (status === 401 || status === 403) return 'auth';
  if (status === 404) return 'not_found';
  if (status >= 500) return 'server_error';
  return 'bad_request';
}

/** Pulls a human message out of an upstream error body (OpenAI and Anthropic both nest `error.message`). */
export function upstreamMessage(body: string, status: number): string {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown };
    if (typeof parsed.error === 'string') return parsed.error;
    if (parsed.error && typeof parsed.error.message === 'string') return parsed.error.message;
    if (typeof parsed.message === 'string') return parsed.message;
  } catch {
    // not JSON
  }
  return body.trim().slice(0, 500) || `upstream answered ${status}`;
}

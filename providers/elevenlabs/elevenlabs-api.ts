import type { ProviderConfig } from '../config/config-schema.ts';
import { baseUrl, retryPolicy } from '../common/provider-options.ts';
import { UpstreamError, kindForStatus } from '../common/upstream-error.ts';
import type { RetryPolicy } from '../common/retry-policy.ts';
import type { UpstreamHealth } from '../common/upstream-health.ts';
import { defaultMessage, upstreamRequest } from '../common/upstream-request.ts';
import { upstreamErrorText } from '../common/upstream-body.ts';

/** The API root without `/v1`: paths below name their version, as ElevenLabs' own docs do. */
export const ELEVENLABS_BASE_URL = 'https://api.elevenlabs.io';

/** A voice clone uploads up to 25 samples of 25 MB: allow it more than a JSON call. */
const UPLOAD_TIMEOUT_MS = 5 * 60_000;

/**
 * ElevenLabs errors are FastAPI's `{"detail": …}`: an object `{status, message}` for its own
 * refusals (`voice_not_found`, `quota_exceeded`…), a list of `{loc, msg}` for validation.
 * @see https://elevenlabs.io/docs/developer-guides/error-messages
 */
export function elevenLabsMessage(body: string, status: number): string {
  try {
    const parsed = JSON.parse(body) as { detail?: { message?: unknown; status?: unknown } };
    const detail = parsed.detail;
    if (detail && typeof detail === 'object' && !Array.isArray(detail) && typeof detail.message === 'string')
      return detail.message;
  } catch {
    // not JSON: the shared reader copes
  }
  return defaultMessage(body, status);
}

/** One configured ElevenLabs account: its base URL, key and retry policy, and the calls made with them. */
export class ElevenLabsApi {
  readonly base: string;
  readonly policy: RetryPolicy;
  /** The provider id, naming it in failure messages. */
  readonly label: string;
  private readonly key: Record<string, string>;

  constructor(
    config: ProviderConfig,
    readonly health: UpstreamHealth,
  ) {
    this.base = baseUrl(config, ELEVENLABS_BASE_URL);
    this.label = config.id;
    this.policy = retryPolicy(config);
    // @see https://elevenlabs.io/docs/api-reference/authentication
    this.key = config.api_key ? { 'xi-api-key': config.api_key } : {};
  }

  /** A JSON call with the shared retries (connect errors, timeouts, 408, 429, 5xx). */
  request(
    method: 'GET' | 'POST',
    path: string,
    opts: { body?: unknown; accept?: string; signal: AbortSignal },
  ): Promise<Response> {
    return upstreamRequest({
      method,
      url: `${this.base}${path}`,
      headers: { ...this.key, ...(opts.accept ? { accept: opts.accept } : {}) },
      body: opts.body,
      policy: this.policy,
      signal: opts.signal,
      health: this.health,
      message: elevenLabsMessage,
    });
  }

  /**
   * A multipart upload, made once: creating a voice is not idempotent, so a failure (even a 5xx,
   * after which the voice may exist) is reported rather than retried into a duplicate.
   */
  async upload(path: string, form: FormData, signal: AbortSignal): Promise<Response> {
    const timeout = AbortSignal.timeout(Math.max(this.policy.timeoutMs, UPLOAD_TIMEOUT_MS));
    let res: Response;
    try {
      res = await fetch(`${this.base}${path}`, {
        method: 'POST',
        headers: { ...this.key, accept: 'application/json' },
        body: form,
        signal: AbortSignal.any([signal, timeout]),
        redirect: 'error',
      });
    } catch (err) {
      const error = timeout.aborted
        ? new UpstreamError('timeout', 'upstream did not answer in time')
        : new UpstreamError('unreachable', `upstream unreachable: ${err instanceof Error ? err.message : String(err)}`);
      this.health.failed(error.message);
      throw error;
    }
    if (res.ok) {
      this.health.succeeded();
      return res;
    }
    const text = await upstreamErrorText(res);
    const error = new UpstreamError(kindForStatus(res.status), elevenLabsMessage(text, res.status), res.status);
    if (res.status === 429 || res.status >= 500 || error.kind === 'auth')
      this.health.failed(`${res.status} ${error.message}`);
    else this.health.succeeded();
    throw error;
  }
}

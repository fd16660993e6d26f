import { UpstreamError } from '../common/upstream-error.ts';
import type { UpstreamHealth } from '../common/upstream-health.ts';
import { defaultMessage, jsonBody, upstreamRequest } from '../common/upstream-request.ts';
import type { FalSettings } from './fal-settings.ts';
import { upstreamErrorText } from '../common/upstream-body.ts';

/**
 * fal's queue: submit, status, result, cancel.
 * @see https://docs.fal.ai/model-endpoints/queue
 */
export interface FalSubmitted {
  request_id: string;
  status_url?: string;
  response_url?: string;
  cancel_url?: string;
}

export interface FalStatus {
  status: 'IN_QUEUE' | 'IN_PROGRESS' | 'COMPLETED' | string;
  queue_position?: number;
  response_url?: string;
  /** Set on a COMPLETED request that failed. */
  error?: unknown;
  error_type?: string;
}

/** Where one request's status, result and cancel live. */
export interface FalRequestUrls {
  status: string;
  response: string;
  cancel: string;
}

/** The result: the model's output, or how the request failed (fal already retried what it could). */
export type FalResult =
  | { ok: true; output: unknown }
  | { ok: false; message: string; errorType?: string; status: number };

export class FalQueue {
  constructor(
    private readonly settings: FalSettings,
    private readonly health: UpstreamHealth,
  ) {}

  private headers(): Record<string, string> {
    return { authorization: `Key ${this.settings.key}` };
  }

  /**
   * The URLs fal answered with, when they stay on the configured queue host (the key is sent
   * there); otherwise the documented paths, which drop the model id's subpath (`fal-ai/flux/dev`
   * → `fal-ai/flux`).
   */
  urlsFor(modelId: string, submitted: FalSubmitted): FalRequestUrls {
    const origin = new URL(this.settings.base).origin;
    const sameHost = (url: string | undefined) => {
      if (!url) return undefined;
      try {
        return new URL(url).origin === origin ? url : undefined;
      } catch {
        return undefined;
      }
    };
    const appId = modelId.split('/').slice(0, 2).join('/');
    const request = `${this.settings.base}/${appId}/requests/${encodeURIComponent(submitted.request_id)}`;
    return {
      status: sameHost(submitted.status_url) ?? `${request}/status`,
      response: sameHost(submitted.response_url) ?? request,
      cancel: sameHost(submitted.cancel_url) ?? `${request}/cancel`,
    };
  }

  async submit(modelId: string, input: Record<string, unknown>, signal: AbortSignal): Promise<FalSubmitted> {
    const response = await upstreamRequest({
      method: 'POST',
      url: `${this.settings.base}/${modelId}`,
      headers: this.headers(),
      body: input,
      policy: this.settings.policy,
      signal,
      health: this.health,
    });
    const submitted = await jsonBody<FalSubmitted>(response);
    if (typeof submitted?.request_id !== 'string')
      throw new UpstreamError('server_error', 'fal answered the submit without a request_id', response.status);
    return submitted;
  }

  async status(urls: FalRequestUrls, signal: AbortSignal): Promise<FalStatus> {
    const response = await upstreamRequest({
      method: 'GET',
      url: urls.status,
      headers: this.headers(),
      policy: this.settings.policy,
      signal,
      health: this.health,
    });
    const status = await jsonBody<FalStatus>(response);
    if (typeof status?.status !== 'string')
      throw new UpstreamError('server_error', 'fal answered the status without a status', response.status);
    return status;
  }

  /**
   * A failed request's result is an error answer: a model error (4xx, `detail` list) or a
   * request error (`detail` + `error_type`, also in `X-Fal-Error-Type`). Those are final; other
   * 5xx answers are the queue's own trouble and retried.
   * @see https://docs.fal.ai/documentation/model-apis/request-errors
   * @see https://fal.ai/docs/documentation/model-apis/errors
   */
  async result(urls: FalRequestUrls, signal: AbortSignal): Promise<FalResult> {
    const response = await upstreamRequest({
      method: 'GET',
      url: urls.response,
      headers: this.headers(),
      policy: this.settings.policy,
      signal,
      health: this.health,
      passStatus: (status, headers) =>
        headers.has('x-fal-error-type') || (status >= 400 && status < 500 && status !== 408 && status !== 429),
    });
    if (response.ok) return { ok: true, output: await jsonBody<unknown>(response) };
    const text = await upstreamErrorText(response);
    let errorType = response.headers.get('x-fal-error-type') ?? undefined;
    try {
      const parsed = JSON.parse(text) as { error_type?: unknown };
      if (typeof parsed.error_type === 'string') errorType = parsed.error_type;
    } catch {
      // the message reader copes with any body
    }
    return { ok: false, message: defaultMessage(text, response.status), errorType, status: response.status };
  }

  async cancel(urls: FalRequestUrls, signal: AbortSignal): Promise<void> {
    const response = await upstreamRequest({
      method: 'PUT',
      url: urls.cancel,
      headers: this.headers(),
      policy: this.settings.policy,
      signal,
      health: this.health,
      // 400 `ALREADY_COMPLETED`: nothing left to stop.
      passStatus: (status) => status === 400,
    });
    await response.body?.cancel().catch(() => undefined);
  }
}

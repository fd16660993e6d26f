import type { UpstreamHealth } from '../common/upstream-health.ts';
import { jsonBody, upstreamRequest } from '../common/upstream-request.ts';
import { isPrediction, type Prediction } from './replicate-prediction.ts';
import type { ReplicateSettings } from './replicate-settings.ts';
import { UpstreamError } from '../common/upstream-error.ts';

/** Where a prediction of a configured model is created. */
export type ReplicateTarget =
  /** An official model or any model's latest version: `owner/name`. */
  | { kind: 'model'; owner: string; name: string }
  /** A deployment: `owner/name` with `options.deployment: true`. */
  | { kind: 'deployment'; owner: string; name: string }
  /** A pinned version: a 64-hex id, or `owner/name:id`. */
  | { kind: 'version'; version: string };

const VERSION_ID = /^[0-9a-f]{64}$/;

export function parseTarget(upstreamModel: string, deployment: boolean): ReplicateTarget | undefined {
  const colon = upstreamModel.indexOf(':');
  if (colon >= 0) {
    const version = upstreamModel.slice(colon + 1);
    return version ? { kind: 'version', version } : undefined;
  }
  if (VERSION_ID.test(upstreamModel)) return { kind: 'version', version: upstreamModel };
  const [owner, name, extra] = upstreamModel.split('/');
  if (!owner || !name || extra !== undefined) return undefined;
  return { kind: deployment ? 'deployment' : 'model', owner, name };
}

/**
 * Replicate's predictions API, the three calls the gateway needs.
 * @see https://replicate.com/docs/reference/http#predictions.create
 * @see https://replicate.com/docs/reference/http#models.predictions.create
 * @see https://replicate.com/docs/reference/http#predictions.cancel
 */
export class ReplicateApi {
  constructor(
    private readonly settings: ReplicateSettings,
    private readonly health: UpstreamHealth,
  ) {}

  private headers(): Record<string, string> {
    // No `Prefer: wait`: the runner never blocks a slot on a long generation.
    return { authorization: `Bearer ${this.settings.token}` };
  }

  private async call(method: 'GET' | 'POST', path: string, body: unknown, signal: AbortSignal): Promise<Prediction> {
    const response = await upstreamRequest({
      method,
      url: `${this.settings.base}${path}`,
      headers: this.headers(),
      body,
      policy: this.settings.policy,
      signal,
      health: this.health,
    });
    const prediction = await jsonBody<unknown>(response);
    if (!isPrediction(prediction))
      throw new UpstreamError(
        'server_error',
        `replicate answered ${path} without a prediction id and status`,
        response.status,
      );
    return prediction;
  }

  create(
    target: ReplicateTarget,
    input: Record<string, unknown>,
    webhook: string | undefined,
    signal: AbortSignal,
  ): Promise<Prediction> {
    const body: Record<string, unknown> = { input };
    if (webhook) {
      body.webhook = webhook;
      // Only the final state: the gateway waits for nothing else.
      body.webhook_events_filter = ['completed'];
    }
    switch (target.kind) {
      case 'version':
        return this.call('POST', '/predictions', { version: target.version, ...body }, signal);
      case 'model':
        return this.call(
          'POST',
          `/models/${encodeURIComponent(target.owner)}/${encodeURIComponent(target.name)}/predictions`,
          body,
          signal,
        );
      case 'deployment':
        return this.call(
          'POST',
          `/deployments/${encodeURIComponent(target.owner)}/${encodeURIComponent(target.name)}/predictions`,
          body,
          signal,
        );
      default: {
        const exhaustive: never = target;
        throw new Error(`unknown replicate target ${JSON.stringify(exhaustive)}`);
      }
    }
  }

  get(id: string, signal: AbortSignal): Promise<Prediction> {
    return this.call('GET', `/predictions/${encodeURIComponent(id)}`, undefined, signal);
  }

  async cancel(id: string, signal: AbortSignal): Promise<void> {
    await this.call('POST', `/predictions/${encodeURIComponent(id)}/cancel`, undefined, signal);
  }
}

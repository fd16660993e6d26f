import type { ProviderConfig } from '../config/config-schema.ts';
import { baseUrl, retryPolicy } from '../common/provider-options.ts';
import type { RetryPolicy } from '../common/retry-policy.ts';

export const FAL_QUEUE = 'https://queue.fal.run';

/** A configured fal provider, resolved once at start. */
export interface FalSettings {
  providerId: string;
  /** The queue's base URL; requests are `{base}/{model_id}`. */
  base: string;
  key: string;
  policy: RetryPolicy;
}

export function falSettings(config: ProviderConfig): FalSettings {
  return {
    providerId: config.id,
    base: baseUrl(config, FAL_QUEUE),
    key: config.api_key ?? '',
    policy: retryPolicy(config),
  };
}

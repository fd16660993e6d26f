import { ConfigError } from '../config/config-error.ts';
import type { ProviderConfig } from '../config/config-schema.ts';
import { baseUrl, retryPolicy } from '../common/provider-options.ts';
import type { RetryPolicy } from '../common/retry-policy.ts';
import type { ProviderHost } from '../types.ts';

export const REPLICATE_API = 'https://api.replicate.com/v1';

/** A configured Replicate provider, resolved once at start. */
export interface ReplicateSettings {
  providerId: string;
  base: string;
  token: string;
  policy: RetryPolicy;
  /** `whsec_…` key Replicate signs webhooks with (`GET /v1/webhooks/default/secret`). */
  webhookSecret?: string;
  /** Where Replicate calls back (with `?task=<id>`), when webhooks are on. */
  webhookUrl?: string;
}

/**
 * Provider `options`: `webhook_secret` (enables webhooks), `webhooks`: `auto` (default: only when
 * `PUBLIC_URL` is public, as Replicate must reach it) | `always` | `never`.
 */
export function replicateSettings(config: ProviderConfig, host: ProviderHost | undefined): ReplicateSettings {
  const path = `providers[${config.id}].options`;
  const options = config.options ?? {};
  const mode = options.webhooks ?? 'auto';
  if (mode !== 'auto' && mode !== 'always' && mode !== 'never')
    throw new ConfigError(`${path}.webhooks: expected auto, always or never`);
  const secret = options.webhook_secret;
  if (secret !== undefined && typeof secret !== 'string')
    throw new ConfigError(`${path}.webhook_secret: expected the whsec_… signing secret`);
  if (mode === 'always' && !secret && config.missingEnv.length === 0)
    throw new ConfigError(`${path}.webhook_secret: webhooks: always needs the signing secret`);
  const useWebhooks =
    Boolean(secret) && host !== undefined && (mode === 'always' || (mode === 'auto' && host.publicUrlReachable));
  return {
    providerId: config.id,
    base: baseUrl(config, REPLICATE_API),
    token: config.api_key ?? '',
    policy: retryPolicy(config),
    webhookSecret: secret || undefined,
    webhookUrl:
      useWebhooks && host
        ? `${host.publicUrl.replace(/\/+$/, '')}/upstream-webhooks/${encodeURIComponent(config.id)}`
        : undefined,
  };
}

import type { ProviderConfig } from '../config/config-schema.ts';
import type { RetryPolicy } from './retry-policy.ts';

/** Retry and timeout settings of a configured provider, with production defaults. */
export function retryPolicy(config: ProviderConfig): RetryPolicy {
  return { maxRetries: config.max_retries ?? 2, timeoutMs: config.timeout_ms ?? 60_000, baseDelayMs: 200 };
}

export function baseUrl(config: ProviderConfig, fallback: string): string {
  return (config.base_url ?? fallback).replace(/\/+$/, '');
}

import type { ProviderHealth } from '../types.ts';

/** Consecutive failed upstream calls after which a provider counts as failing. */
export const FAILING_AFTER = 5;

/**
 * Counts a provider's consecutive failed upstream calls (unreachable, timeouts, 429, 5xx, bad
 * credentials). One success resets it. A client's own bad input (a 4xx about the request) is not
 * the provider failing and counts as a success. Per instance: `/readyz` reports this instance.
 */
export class UpstreamHealth implements ProviderHealth {
  private consecutive = 0;
  private lastError = '';

  succeeded(): void {
    this.consecutive = 0;
  }

  failed(message: string): void {
    this.consecutive++;
    this.lastError = message;
  }

  failing(): string | undefined {
    return this.consecutive >= FAILING_AFTER
      ? `${this.consecutive} consecutive upstream errors, last: ${this.lastError}`
      : undefined;
  }
}

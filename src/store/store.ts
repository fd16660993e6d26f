/**
 * The shared cache/coordination store: Redis in production, an in-process map when
 * `REDIS_URL` is unset. Everything that must hold across instances (rate limits, key
 * invalidation, caches) goes through this interface only.
 */
export interface Store {
  readonly kind: 'redis' | 'memory';
  get(key: string): Promise<string | null>;
  /** Several keys in one round trip, in order (null for each missing one). */
  getMany(keys: readonly string[]): Promise<Array<string | null>>;
  /** `ttlMs` omitted → no expiry. */
  set(key: string, value: string, ttlMs?: number): Promise<void>;
  del(key: string): Promise<void>;
  /** Atomically adds `by` and returns the new value; a new key expires after `ttlMs`. */
  incr(key: string, by: number, ttlMs: number): Promise<number>;
  /** Milliseconds until the key expires, or -1 when it has no expiry / does not exist. */
  ttl(key: string): Promise<number>;
  /**
   * Sends `message` to every subscriber of `channel`. Never lost to a store that is briefly
   * away: a message that cannot be sent now is sent, in order, once the store is back.
   */
  publish(channel: string, message: string): Promise<void>;
  /** Resolves once the subscription is live; returns an unsubscribe function. */
  subscribe(channel: string, handler: (message: string) => void): Promise<() => Promise<void>>;
  /**
   * Calls `handler` each time the subscriptions come back after their connection was lost:
   * whatever was published meanwhile was missed, so a cache of what messages invalidate drops
   * everything it holds.
   */
  onResubscribed(handler: () => void): void;
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

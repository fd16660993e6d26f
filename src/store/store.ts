/**
 * The shared cache/coordination store: Redis in production, an in-process map when
 * `REDIS_URL` is unset. Everything that must hold across instances (rate limits, key
 * invalidation, caches) goes through this interface only.
 */
export interface Store {
  readonly kind: 'redis' | 'memory';
  get(key: string): Promise<string | null>;
  /** `ttlMs` omitted → no expiry. */
  set(key: string, value: string, ttlMs?: number): Promise<void>;
  del(key: string): Promise<void>;
  /** Atomically adds `by` and returns the new value; a new key expires after `ttlMs`. */
  incr(key: string, by: number, ttlMs: number): Promise<number>;
  /** Milliseconds until the key expires, or -1 when it has no expiry / does not exist. */
  ttl(key: string): Promise<number>;
  publish(channel: string, message: string): Promise<void>;
  /** Resolves once the subscription is live; returns an unsubscribe function. */
  subscribe(channel: string, handler: (message: string) => void): Promise<() => Promise<void>>;
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

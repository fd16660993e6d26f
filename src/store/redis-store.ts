import Redis from 'ioredis';
import type { Store } from './store.ts';

/** INCRBY and set the expiry only when the key was just created, in one round trip. */
const INCR_WITH_TTL = `
local value = redis.call('INCRBY', KEYS[1], ARGV[1])
if value == tonumber(ARGV[1]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return value`;

type RedisWithIncr = Redis & { incrWithTtl(key: string, by: number, ttlMs: number): Promise<number> };

/**
 * ioredis with auto-pipelining: concurrent requests' commands share round trips, which keeps
 * the per-request rate-limit counter cheap under load. Pub/sub needs its own connection.
 */
export class RedisStore implements Store {
  readonly kind = 'redis' as const;
  private readonly client: RedisWithIncr;
  private subscriber?: Redis;
  private readonly handlers = new Map<string, Set<(message: string) => void>>();

  /** `prefix` namespaces keys and channels, so several gateways (or test runs) can share one Redis. */
  constructor(
    private readonly url: string,
    private readonly prefix = 'gw:',
  ) {
    this.client = new Redis(url, { enableAutoPipelining: true, maxRetriesPerRequest: 2 }) as RedisWithIncr;
    this.client.defineCommand('incrWithTtl', { numberOfKeys: 1, lua: INCR_WITH_TTL });
  }

  async connect(): Promise<void> {
    await this.client.ping();
  }

  async get(key: string): Promise<string | null> {
    return this.client.get(this.prefix + key);
  }

  async set(key: string, value: string, ttlMs?: number): Promise<void> {
    if (ttlMs) await this.client.set(this.prefix + key, value, 'PX', ttlMs);
    else await this.client.set(this.prefix + key, value);
  }

  async del(key: string): Promise<void> {
    await this.client.del(this.prefix + key);
  }

  async incr(key: string, by: number, ttlMs: number): Promise<number> {
    return Number(await this.client.incrWithTtl(this.prefix + key, by, ttlMs));
  }

  async ttl(key: string): Promise<number> {
    const ms = await this.client.pttl(this.prefix + key);
    return ms < 0 ? -1 : ms;
  }

  async publish(channel: string, message: string): Promise<void> {
    await this.client.publish(this.prefix + channel, message);
  }

  async subscribe(channel: string, handler: (message: string) => void): Promise<() => Promise<void>> {
    if (!this.subscriber) {
      this.subscriber = new Redis(this.url, { maxRetriesPerRequest: null });
      this.subscriber.on('message', (ch: string, message: string) => {
        for (const h of this.handlers.get(ch.slice(this.prefix.length)) ?? []) h(message);
      });
    }
    let set = this.handlers.get(channel);
    if (!set) {
      set = new Set();
      this.handlers.set(channel, set);
      await this.subscriber.subscribe(this.prefix + channel);
    }
    set.add(handler);
    return async () => {
      set.delete(handler);
      if (set.size === 0) {
        this.handlers.delete(channel);
        await this.subscriber?.unsubscribe(this.prefix + channel);
      }
    };
  }

  async ping(): Promise<boolean> {
    try {
      return (await this.client.ping()) === 'PONG';
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    this.subscriber?.disconnect();
    await this.client.quit().catch(() => this.client.disconnect());
  }
}

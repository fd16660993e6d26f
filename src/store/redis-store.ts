import Redis from 'ioredis';
import type { Store } from './store.ts';

/** INCRBY and set the expiry only when the key was just created, in one round trip. */
const INCR_WITH_TTL = `
local value = redis.call('INCRBY', KEYS[1], ARGV[1])
if value == tonumber(ARGV[1]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return value`;

type RedisWithIncr = Redis & { incrWithTtl(key: string, by: number, ttlMs: number): Promise<number> };

/** Messages kept while Redis is away: invalidations are short, and a long outage drops the oldest (the caches' TTL backs them). */
const MAX_UNSENT = 10_000;

/**
 * ioredis with auto-pipelining: concurrent requests' commands share round trips, which keeps
 * the per-request rate-limit counter cheap under load. Pub/sub needs its own connection.
 */
export class RedisStore implements Store {
  readonly kind = 'redis' as const;
  private readonly client: RedisWithIncr;
  private subscriber?: Redis;
  private readonly handlers = new Map<string, Set<(message: string) => void>>();
  private readonly resubscribed: Array<() => void> = [];
  /** Messages Redis could not take yet, oldest first, and the timer that tries them again. */
  private readonly unsent: Array<[channel: string, message: string]> = [];
  private resendTimer: ReturnType<typeof setTimeout> | undefined;
  /** The one loop sending `unsent` (two would both send, and both drop, its first message). */
  private resending: Promise<void> | undefined;
  private resendAttempt = 0;
  private closed = false;

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

  async getMany(keys: readonly string[]): Promise<Array<string | null>> {
    if (keys.length === 0) return [];
    return this.client.mget(keys.map((key) => this.prefix + key));
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

  /**
   * A message Redis cannot take now (failover, a network blip) is kept and sent again, in order,
   * every 0.2–5 s until it is: the change it announces is already committed, and its caller
   * (a key revocation, an account's new balance) cannot make it again. Later messages queue
   * behind it, so none overtakes an earlier one.
   */
  async publish(channel: string, message: string): Promise<void> {
    if (this.unsent.length === 0) {
      try {
        await this.client.publish(this.prefix + channel, message);
        return;
      } catch {
        // kept below, and sent again
      }
    }
    if (this.unsent.length >= MAX_UNSENT) this.unsent.shift();
    this.unsent.push([channel, message]);
    this.scheduleResend();
  }

  private scheduleResend(): void {
    if (this.resendTimer || this.resending || this.closed) return;
    const delay = Math.min(5_000, 200 * 2 ** this.resendAttempt++);
    this.resendTimer = setTimeout(() => {
      this.resendTimer = undefined;
      void this.resend();
    }, delay);
    this.resendTimer.unref?.();
  }

  /** Sends what is waiting, oldest first; joins the loop already running, if one is. */
  private resend(): Promise<void> {
    this.resending ??= (async () => {
      let sent = true;
      while (this.unsent.length > 0 && !this.closed && sent) {
        const [channel, message] = this.unsent[0] as [string, string];
        try {
          await this.client.publish(this.prefix + channel, message);
          this.unsent.shift();
        } catch {
          sent = false;
        }
      }
      return sent;
    })().then((sent) => {
      this.resending = undefined;
      if (sent) this.resendAttempt = 0;
      else this.scheduleResend();
    });
    return this.resending;
  }

  onResubscribed(handler: () => void): void {
    this.resubscribed.push(handler);
  }

  async subscribe(channel: string, handler: (message: string) => void): Promise<() => Promise<void>> {
    if (!this.subscriber) {
      this.subscriber = new Redis(this.url, { maxRetriesPerRequest: null });
      this.subscriber.on('message', (ch: string, message: string) => {
        for (const h of this.handlers.get(ch.slice(this.prefix.length)) ?? []) h(message);
      });
      // ioredis subscribes again on every reconnection; what was published in between is gone.
      // It says `ready` before its own SUBSCRIBE is answered: the caches are told once this one
      // is, so nothing they read after dropping everything can miss its invalidation.
      let connected = false;
      const subscriber = this.subscriber;
      subscriber.on('ready', () => {
        if (!connected) {
          connected = true;
          return;
        }
        const channels = [...this.handlers.keys()].map((c) => this.prefix + c);
        const live = channels.length ? subscriber.subscribe(...channels) : Promise.resolve();
        void live.then(
          () => {
            for (const h of this.resubscribed) h();
          },
          () => undefined, // lost again: the next `ready` tells them
        );
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
    // What could not be sent is tried once more; then the process goes.
    if (this.resendTimer) clearTimeout(this.resendTimer);
    this.resendTimer = undefined;
    await this.resend();
    this.closed = true;
    this.subscriber?.disconnect();
    await this.client.quit().catch(() => this.client.disconnect());
  }
}

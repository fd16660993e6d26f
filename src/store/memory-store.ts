import type { Store } from './store.ts';

interface Entry {
  value: string;
  expiresAt: number; // ms epoch; Infinity = never
}

/** The embedded default: one process, so a Map and an in-process event bus are the whole story. */
export class MemoryStore implements Store {
  readonly kind = 'memory' as const;
  private readonly entries = new Map<string, Entry>();
  private readonly channels = new Map<string, Set<(message: string) => void>>();
  private readonly sweeper: ReturnType<typeof setInterval>;

  constructor(private readonly now: () => number = Date.now) {
    // Expired keys are dropped lazily on read; the sweep bounds memory for keys never read again.
    this.sweeper = setInterval(() => this.sweep(), 30_000);
    this.sweeper.unref?.();
  }

  private live(key: string): Entry | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  private sweep(): void {
    const now = this.now();
    for (const [key, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(key);
  }

  async get(key: string): Promise<string | null> {
    return this.live(key)?.value ?? null;
  }

  async getMany(keys: readonly string[]): Promise<Array<string | null>> {
    return keys.map((key) => this.live(key)?.value ?? null);
  }

  async set(key: string, value: string, ttlMs?: number): Promise<void> {
    this.entries.set(key, { value, expiresAt: ttlMs ? this.now() + ttlMs : Number.POSITIVE_INFINITY });
  }

  async del(key: string): Promise<void> {
    this.entries.delete(key);
  }

  async incr(key: string, by: number, ttlMs: number): Promise<number> {
    const entry = this.live(key);
    if (!entry) {
      this.entries.set(key, { value: String(by), expiresAt: this.now() + ttlMs });
      return by;
    }
    const next = Number(entry.value) + by;
    entry.value = String(next);
    return next;
  }

  async ttl(key: string): Promise<number> {
    const entry = this.live(key);
    if (!entry || entry.expiresAt === Number.POSITIVE_INFINITY) return -1;
    return entry.expiresAt - this.now();
  }

  async publish(channel: string, message: string): Promise<void> {
    for (const handler of this.channels.get(channel) ?? []) queueMicrotask(() => handler(message));
  }

  /** In process, nothing is ever missed. */
  onResubscribed(_handler: () => void): void {}

  async subscribe(channel: string, handler: (message: string) => void): Promise<() => Promise<void>> {
    let handlers = this.channels.get(channel);
    if (!handlers) {
      handlers = new Set();
      this.channels.set(channel, handlers);
    }
    handlers.add(handler);
    return async () => {
      handlers.delete(handler);
    };
  }

  async ping(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.entries.clear();
    this.channels.clear();
  }
}

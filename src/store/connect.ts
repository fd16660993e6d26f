import { MemoryStore } from './memory-store.ts';
import { RedisStore } from './redis-store.ts';
import type { Store } from './store.ts';

export async function connectStore(redisUrl: string | undefined, prefix?: string): Promise<Store> {
  if (!redisUrl) return new MemoryStore();
  const store = new RedisStore(redisUrl, prefix);
  await store.connect();
  return store;
}

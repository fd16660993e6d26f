import { MemoryStore } from './memory-store.ts';
import { RedisStore } from './redis-store.ts';
import type { Store } from './store.ts';

export async function connectStore(redisUrl: string | undefined): Promise<Store> {
  if (!redisUrl) return new MemoryStore();
  const store = new RedisStore(redisUrl);
  await store.connect();
  return store;
}

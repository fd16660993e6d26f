import { expect, test } from 'bun:test';
import { hashApiKey } from '../../src/auth/api-keys.ts';
import { DashboardSessions, MAX_SESSIONS_PER_KEY } from '../../src/dashboard/dashboard-sessions.ts';
import type { Db } from '../../src/db/database.ts';
import { MemoryStore } from '../../src/store/memory-store.ts';

/**
 * A key's dashboard sessions are a ring of MAX_SESSIONS_PER_KEY slots (src/dashboard/dashboard-sessions.ts):
 * sign-ins at once take different slots, so however many arrive together, at most the bound
 * stay live; and the store never holds a session's id (the cookie), only its hash.
 */
test('sign-ins at once keep at most the bound live, and the store holds no cookie', async () => {
  const store = new MemoryStore();
  const written: string[] = [];
  const set = store.set.bind(store);
  store.set = (key, value, ttl) => {
    written.push(key, value);
    return set(key, value, ttl);
  };
  const sessions = new DashboardSessions({ db: {} as Db, store });
  const made = await Promise.all(
    Array.from({ length: MAX_SESSIONS_PER_KEY * 3 }, () => sessions.create(1, 'gw_the_same_key')),
  );
  let live = 0;
  for (const { id } of made) if (await store.get(`dashboard:session:${hashApiKey(id)}`)) live++;
  expect(live).toBe(MAX_SESSIONS_PER_KEY);
  for (const { id } of made) expect(written.some((text) => text.includes(id))).toBe(false);
  await store.close();
});

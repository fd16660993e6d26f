import { expect, test } from 'bun:test';
import { Logger } from '../../src/ops/logger.ts';
import { MemoryStore } from '../../src/store/memory-store.ts';
import { TaskEvents } from '../../src/tasks/task-events.ts';

const quietLogger = () => new Logger('silent');

test('a change reaches the watchers of that task only, through the store', async () => {
  const store = new MemoryStore();
  const events = new TaskEvents(store, quietLogger());
  const seen: string[] = [];
  const stopA = await events.watch('a', () => seen.push('a'));
  await events.watch('b', () => seen.push('b'));
  events.changed('a');
  await Bun.sleep(5);
  expect(seen).toEqual(['a']);
  stopA();
  events.changed('a');
  await Bun.sleep(5);
  expect(seen).toEqual(['a']);
  await events.close();
  expect(events.shutdown.aborted).toBe(true);
  await store.close();
});

test('reads of one task share one load, until a change notice makes the next read fresh', async () => {
  const store = new MemoryStore();
  const events = new TaskEvents(store, quietLogger());
  await events.watch('t', () => undefined);
  let loads = 0;
  let value = 'old';
  const load = async () => {
    loads++;
    const seenAtStart = value;
    await Bun.sleep(30);
    return seenAtStart;
  };
  const first = await Promise.all([1, 2, 3].map(() => events.shareRead('t', 'acct:t', load)));
  expect(first).toEqual(['old', 'old', 'old']);
  expect(loads).toBe(1);

  // A read under way when the change is announced is not joined by readers woken by the notice.
  const before = events.shareRead('t', 'acct:t', load);
  value = 'new';
  events.changed('t');
  await Bun.sleep(5);
  const after = events.shareRead('t', 'acct:t', load);
  expect(await before).toBe('old');
  expect(await after).toBe('new');
  expect(loads).toBe(3);

  // Another key (another account) never shares.
  await Promise.all([events.shareRead('t', 'acct:t', load), events.shareRead('t', 'other:t', load)]);
  expect(loads).toBe(5);
  await events.close();
  await store.close();
});

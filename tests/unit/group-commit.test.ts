import { describe, expect, test } from 'bun:test';
import { GroupCommit } from '../../src/ops/group-commit.ts';
import { Logger } from '../../src/ops/logger.ts';

const log = new Logger('silent');

function recorder(opts: { lingerMs?: number } = {}) {
  const batches: number[][] = [];
  const commit = new GroupCommit<number, number>(
    async (batch) => {
      batches.push(batch);
      await Bun.sleep(1);
      return batch.map((n) => n * 2);
    },
    { name: 'test write', log, ...opts },
  );
  return { batches, commit };
}

describe('GroupCommit', () => {
  test('items that arrive while a write runs share the next write; results come back in order', async () => {
    const { batches, commit } = recorder();
    const results = await Promise.all([1, 2, 3, 4].map((n) => commit.submit(n)));
    expect(results).toEqual([2, 4, 6, 8]);
    expect(batches).toEqual([[1], [2, 3, 4]]);
  });

  test('with lingerMs, an idle commit waits that long for more items before it writes', async () => {
    const { batches, commit } = recorder({ lingerMs: 30 });
    const first = commit.submit(1);
    await Bun.sleep(10);
    const second = commit.submit(2);
    expect(batches).toEqual([]);
    expect(await Promise.all([first, second])).toEqual([2, 4]);
    expect(batches).toEqual([[1, 2]]);
  });

  test('drain writes what lingers at once, and stopLingering ends the wait for good', async () => {
    const { batches, commit } = recorder({ lingerMs: 10_000 });
    const pending = commit.submit(1);
    expect(batches).toEqual([]);
    const started = performance.now();
    await commit.drain();
    expect(await pending).toBe(2);
    expect(performance.now() - started).toBeLessThan(1_000);
    const again = recorder({ lingerMs: 10_000 });
    const waiting = again.commit.submit(5);
    again.commit.stopLingering();
    expect(await waiting).toBe(10);
    expect(await again.commit.submit(6)).toBe(12);
    expect(again.batches).toEqual([[5], [6]]);
  });
});

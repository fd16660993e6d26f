import { expect, test } from 'bun:test';
import { ClaimLoop } from '../../src/ops/claim-loop.ts';
import { Logger } from '../../src/ops/logger.ts';

test('settled() waits for a claim under way at stop, until its items have started', async () => {
  let answer!: (items: number[]) => void;
  const claimed = new Promise<number[]>((resolve) => {
    answer = resolve;
  });
  const started: number[] = [];
  const loop = new ClaimLoop<number>({
    name: 'test',
    concurrency: 4,
    idleMs: 60_000,
    claim: () => claimed,
    run: async (item) => {
      started.push(item);
    },
    log: new Logger('silent'),
  });
  loop.start();
  await Bun.sleep(5); // the first claim is now under way
  loop.stop();
  let settled = false;
  const waiting = loop.settled().then(() => {
    settled = true;
  });
  await Bun.sleep(5);
  expect(settled).toBe(false);
  answer([1, 2]);
  await waiting;
  // The owner sees every item the claim handed over before it lets go of its resources.
  expect(started).toEqual([1, 2]);
});

test('settled() resolves at once when no claim is under way', async () => {
  const loop = new ClaimLoop<number>({
    name: 'test',
    concurrency: 1,
    claim: async () => [],
    run: async () => {},
    log: new Logger('silent'),
  });
  await loop.settled();
  loop.stop();
});

test('claims that find nothing wait longer each time, up to maxIdleMs; a wake starts over from idleMs', async () => {
  const at: number[] = [];
  const loop = new ClaimLoop<number>({
    name: 'test',
    concurrency: 1,
    idleMs: 10,
    maxIdleMs: 160,
    claim: async () => {
      at.push(performance.now());
      return [];
    },
    run: async () => {},
    log: new Logger('silent'),
  });
  const until = async (n: number) => {
    const deadline = performance.now() + 2000;
    while (at.length < n && performance.now() < deadline) await Bun.sleep(2);
  };
  loop.start();
  await Bun.sleep(800);
  const gaps = at.slice(1).map((t, i) => t - (at[i] as number));
  // 10, 20, 40, 80, 160, 160…: never shorter than the wait it was due (timers fire late, not early).
  expect(gaps.slice(0, 5).map((g, i) => g >= [10, 20, 40, 80, 160][i]! - 1)).toEqual([true, true, true, true, true]);
  expect(Math.max(...gaps)).toBeLessThan(250); // uncapped, the sixth wait would be 320
  expect(at.length).toBeLessThan(15); // polled every 10 ms it would be about 80
  const before = at.length;
  loop.wake();
  await until(before + 2);
  // The wait after a wake is idleMs again, not the 160 it had grown to.
  expect((at[before + 1] as number) - (at[before] as number)).toBeLessThan(100);
  loop.stop();
});

test('work released here is claimed when it comes due, however long the idle wait has grown', async () => {
  const at: number[] = [];
  const loop = new ClaimLoop<number>({
    name: 'test',
    concurrency: 1,
    idleMs: 10,
    maxIdleMs: 60_000,
    claim: async () => {
      at.push(performance.now());
      return [];
    },
    run: async () => {},
    log: new Logger('silent'),
  });
  loop.start();
  await Bun.sleep(400); // waits of 10, 20, 40, 80, 160, then 320 ms: the next claim is far off
  const before = at.length;
  const asked = performance.now();
  loop.wakeAt(50);
  while (at.length === before && performance.now() - asked < 1000) await Bun.sleep(2);
  const waited = (at[before] ?? Number.POSITIVE_INFINITY) - asked;
  expect(waited).toBeGreaterThanOrEqual(49);
  expect(waited).toBeLessThan(150);
  loop.stop();
});

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

import { expect, test } from 'bun:test';
import { GcPacer } from '../../src/uploads/gc-pacer.ts';

test('the GC pacer collects young garbage past one growth mark and everything past the other', () => {
  let rss = 100;
  const calls: string[] = [];
  const pacer = new GcPacer(
    { checkEvery: 10, edenAt: 20, fullAt: 40 },
    { eden: () => calls.push('eden'), full: () => ((rss = 105), calls.push('full')) },
    () => rss,
  );
  pacer.note(9); // below checkEvery: not even looked at
  rss = 130;
  pacer.note(0);
  expect(calls).toEqual([]);
  pacer.note(1); // 30 over the level: a young collection
  expect(calls).toEqual(['eden']);
  rss = 150;
  pacer.note(10); // 50 over: full, and the level becomes 105
  expect(calls).toEqual(['eden', 'full']);
  rss = 90;
  pacer.note(10); // memory given back: the level follows it down
  rss = 115;
  pacer.note(10); // 25 over 90: young again
  expect(calls).toEqual(['eden', 'full', 'eden']);
});

import { expect, test } from 'bun:test';
import { resolve } from 'node:path';

/**
 * Bun runs TypeScript without checking its types, so a type error (a merge that changed a
 * signature, a stub missing a field) would pass every other test. `npm test`, and so CI, runs the
 * compiler over the whole tree (`tsconfig.json`) and fails on any error.
 */
const ROOT = resolve(import.meta.dir, '../..');

test('tsc finds no type error', () => {
  const run = Bun.spawnSync([`${ROOT}/node_modules/.bin/tsc`, '--noEmit', '-p', ROOT], { cwd: ROOT });
  const output = `${run.stdout.toString()}${run.stderr.toString()}`;
  expect(run.exitCode === 0 ? '' : output).toBe('');
});

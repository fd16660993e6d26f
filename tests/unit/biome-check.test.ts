import { expect, test } from 'bun:test';
import { resolve } from 'node:path';

/**
 * One formatter and linter for the whole tree (`biome.json`): `npm test`, and so CI, fails on any
 * file Biome would reformat and on any lint finding, warnings included.
 */
const ROOT = resolve(import.meta.dir, '../..');

test('biome finds nothing to format or lint', () => {
  const run = Bun.spawnSync([`${ROOT}/node_modules/.bin/biome`, 'ci', '.', '--colors=off', '--error-on-warnings'], {
    cwd: ROOT,
  });
  const output = `${run.stdout.toString()}${run.stderr.toString()}`;
  expect(run.exitCode === 0 ? '' : output).toBe('');
});

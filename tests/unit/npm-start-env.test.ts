import { expect, test } from 'bun:test';
import { resolve } from 'node:path';
import { NPM_START_ENV } from '../helpers/gateway-process.ts';

/**
 * Tests and benchmarks start `bun run src/main.ts` themselves with NPM_START_ENV; this keeps it
 * what `npm start` really sets, so a figure measured there is the started gateway's.
 */
test('npm start sets, as defaults, exactly the variables gateways under test start with', async () => {
  const pkg = (await Bun.file(resolve(import.meta.dir, '../../package.json')).json()) as {
    scripts: { start: string };
  };
  const start = pkg.scripts.start;
  const defaults = Object.fromEntries(
    [...start.matchAll(/(\w+)=\$\{(\w+):-([^}]*)\}/g)].map(([, name, again, value]) => {
      // `X=${X:-v}`: a value set by whoever runs npm start wins over the default.
      expect(again).toBe(name);
      return [name, value];
    }),
  );
  expect(defaults).toEqual({ ...NPM_START_ENV });
  expect(start.endsWith('bun run src/main.ts')).toBe(true);
});

import { existsSync, readFileSync } from 'node:fs';
import { cp, mkdir, readdir, rename, rm, rmdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * A new embedded database starts as a copy of a pre-initialised, empty cluster (the template)
 * instead of running PGlite's initdb in the gateway: initdb peaks at about 1.1 GB and leaves the
 * process at about 700 MB, where a gateway on a copied cluster peaks at about 200 MB (bench/README.md,
 * "Embedded default"). The template is built once per PGlite version, at `npm install`
 * (`postinstall` runs src/cli/embedded-template.ts) or, if that did not run, by a child process
 * on the first start, whose memory goes back to the system when it exits.
 *
 * Only brand-new data directories are touched: an existing cluster (it has `PG_VERSION`) opens as
 * it is, and migrations bring it up to date as on Postgres. The template holds no schema, so it
 * never goes stale when migrations are added.
 */
const PGLITE_PACKAGE = resolve(dirname(fileURLToPath(import.meta.resolve('@electric-sql/pglite'))), '..');
const PGLITE_VERSION = String(JSON.parse(readFileSync(join(PGLITE_PACKAGE, 'package.json'), 'utf8')).version);
const BUILD_SCRIPT = resolve(import.meta.dir, '../cli/embedded-template.ts');

/** node_modules/.cache/generation-gateway/pglite-<version>: beside the PGlite it was made with. */
export const TEMPLATE_DIR = join(
  PGLITE_PACKAGE,
  '..',
  '..',
  '.cache',
  'generation-gateway',
  `pglite-${PGLITE_VERSION}`,
);

const isCluster = (dir: string) => existsSync(join(dir, 'PG_VERSION'));

/** Builds the template if missing, in a child process (`bun run src/cli/embedded-template.ts`). */
export async function ensureTemplate(): Promise<string> {
  if (isCluster(TEMPLATE_DIR)) return TEMPLATE_DIR;
  const build = Bun.spawn([process.execPath, 'run', BUILD_SCRIPT], { stdout: 'ignore', stderr: 'pipe' });
  const [code, err] = await Promise.all([build.exited, new Response(build.stderr).text()]);
  if (code !== 0 || !isCluster(TEMPLATE_DIR))
    throw new Error(`building the embedded database template failed (${code}): ${err.slice(-2000)}`);
  return TEMPLATE_DIR;
}

/**
 * Makes `target` a copy of a fresh cluster unless it already holds one. The copy lands under a
 * temporary name and is renamed into place, so a start killed half-way leaves no half cluster.
 * A non-empty directory that is not a cluster is left alone (PGlite will initdb into it, as before).
 */
export async function seedDataDir(target: string): Promise<'existing' | 'copied' | 'left'> {
  if (isCluster(target)) return 'existing';
  if (existsSync(target)) {
    if ((await readdir(target)).length > 0) return 'left';
    await rmdir(target);
  }
  const template = await ensureTemplate();
  await mkdir(dirname(target), { recursive: true });
  const staging = `${target}.new-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  await cp(template, staging, { recursive: true });
  await rename(staging, target);
  return 'copied';
}

/** Creates the template: initdb in a staging directory, then renamed into place (another builder may win the race). */
export async function buildTemplate(): Promise<string> {
  if (isCluster(TEMPLATE_DIR)) return TEMPLATE_DIR;
  const { PGlite } = await import('@electric-sql/pglite');
  const staging = `${TEMPLATE_DIR}.new-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { recursive: true });
  const pg = new PGlite(staging);
  await pg.waitReady;
  await pg.close();
  try {
    await rename(staging, TEMPLATE_DIR);
  } catch (err) {
    if (!isCluster(TEMPLATE_DIR)) throw err;
    await rm(staging, { recursive: true, force: true });
  }
  return TEMPLATE_DIR;
}

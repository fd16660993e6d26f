/**
 * `bun run src/cli/embedded-template.ts`: builds the embedded database's template cluster
 * (src/db/pglite-template.ts) if it is missing. `npm install` runs it (`postinstall`), so the
 * first `npm start` copies a ready cluster instead of running initdb; the gateway runs it as a
 * child process when it finds no template.
 */
import { buildTemplate } from '../db/pglite-template.ts';

const started = performance.now();
try {
  const dir = await buildTemplate();
  process.stdout.write(`embedded database template ready in ${dir} (${Math.round(performance.now() - started)} ms)\n`);
} catch (err) {
  // Never fail `npm install` for it: the gateway builds the template, or runs initdb, at first start.
  process.stderr.write(`embedded database template not built: ${err instanceof Error ? err.message : String(err)}\n`);
  // Run by the gateway (not by npm), a failure must show in the exit code.
  if (process.env.npm_lifecycle_event !== 'postinstall') process.exit(1);
}

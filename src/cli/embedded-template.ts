/**
 * `bun run src/cli/embedded-template.ts`: builds the embedded database's template cluster
 * (src/db/pglite-template.ts) if it is missing. `npm install` runs it (`postinstall`), so the
 * first `npm start` copies a ready cluster instead of running initdb; the gateway runs it as a
 * child process when it finds no template.
 */
import { buildTemplate } from '../db/pglite-template.ts';

const started = performance.now();
const dir = await buildTemplate();
process.stdout.write(`embedded database template ready in ${dir} (${Math.round(performance.now() - started)} ms)\n`);

/**
 * The embedded database's own thread (a Bun Worker started by pglite-client.ts). PGlite runs
 * Postgres compiled to WebAssembly synchronously on whichever thread calls it: on the request
 * thread every statement stopped HTTP work for its whole duration, and group commit could not
 * gather a batch while the previous one ran. Here statements run one at a time, in arrival order
 * (the main thread's connection queue decides that order, pglite-dialect.ts).
 */
import { PGlite } from '@electric-sql/pglite';
import type { WorkerReply, WorkerRequest } from './pglite-messages.ts';
import { pglitePrepared } from './pglite-prepared.ts';
import { DURABLE_START_PARAMS, DurableNodeFS } from './pglite-durable.ts';

declare const self: Worker;

/** int8 comes back as a JS number, as node-postgres is set up to on Postgres (connect.ts). */
const INT8 = 20;

/**
 * PGlite's Postgres keeps its shared buffers in the WebAssembly heap, all of it resident: the
 * default 128 MB made most of an idle embedded gateway's memory. 8 MB (1,024 pages) holds this
 * schema's hot rows (accounts, keys, leases) many times over; bulk tables (tasks, ledger) are
 * appended, and the data directory's pages stay in the OS page cache anyway.
 */
const SETTINGS = ['shared_buffers=8MB', 'maintenance_work_mem=16MB'];

let pg: PGlite | undefined;
let prepared: ReturnType<typeof pglitePrepared> | undefined;
let queue: Promise<void> = Promise.resolve();

async function handle(req: WorkerRequest): Promise<WorkerReply> {
  if (req.op === 'open') {
    pg = new PGlite({
      fs: new DurableNodeFS(req.dir),
      parsers: { [INT8]: (value: string) => Number(value) },
      startParams: [...DURABLE_START_PARAMS, ...SETTINGS.flatMap((setting) => ['-c', setting])],
    });
    await pg.waitReady;
    prepared = pglitePrepared(pg);
    return { id: req.id, ok: true, rows: [] };
  }
  if (!pg || !prepared) throw new Error('the embedded database is not open');
  if (req.op === 'query') {
    const result = await pg.query(req.sql, req.params);
    return { id: req.id, ok: true, rows: result.rows, affectedRows: result.affectedRows };
  }
  if (req.op === 'prepared') return { id: req.id, ok: true, rows: await prepared(req.name, req.sql, req.params) };
  await pg.close();
  return { id: req.id, ok: true, rows: [] };
}

self.onmessage = (event: MessageEvent<WorkerRequest>) => {
  const req = event.data;
  queue = queue.then(async () => {
    let reply: WorkerReply;
    try {
      reply = await handle(req);
    } catch (err) {
      // A Postgres error's fields (code, detail, constraint…) travel as plain data.
      const fields: Record<string, unknown> = {};
      if (err && typeof err === 'object')
        for (const [k, v] of Object.entries(err))
          if (k !== 'query' && (v === null || typeof v !== 'object')) fields[k] = v;
      reply = { id: req.id, ok: false, message: err instanceof Error ? err.message : String(err), fields };
    }
    self.postMessage(reply);
  });
};

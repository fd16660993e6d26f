import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Kysely, PostgresDialect } from 'kysely';
import type { Database, Db } from './database.ts';
import { errorFields, type Logger } from '../ops/logger.ts';
import { PGliteDialect } from './pglite-dialect.ts';
import { pglitePrepared } from './pglite-prepared.ts';
import { seedDataDir } from './pglite-template.ts';
import type { Compiled, RunPrepared } from './prepared.ts';

/** Postgres type OIDs whose default parsing we change on both drivers alike. */
const INT8 = 20;

/**
 * PGlite's Postgres keeps its shared buffers in the WebAssembly heap, all of it resident: the
 * default 128 MB made most of an idle embedded gateway's memory. 16 MB holds this schema's hot
 * rows (accounts, keys, leases) many times over; bulk tables (tasks, ledger) are appended, and
 * the data directory's pages stay in the OS page cache anyway.
 */
const PGLITE_SETTINGS = ['shared_buffers=16MB', 'maintenance_work_mem=16MB'];

export interface DatabaseHandle {
  db: Db;
  kind: 'postgres' | 'pglite';
  /** Named prepared statements for the hot paths (see prepared.ts). */
  prepared: RunPrepared;
  close(): Promise<void>;
}

/**
 * `DATABASE_URL` → node-postgres pool; unset → PGlite in `DATA_DIR/pg`. Same SQL, same migrations.
 * int8 comes back as a JS number on both (ids and sizes stay far below 2^53).
 */
export async function connectDatabase(opts: {
  databaseUrl?: string;
  dataDir: string;
  poolSize?: number;
  log?: Logger;
}): Promise<DatabaseHandle> {
  if (opts.databaseUrl) {
    const pg = await import('pg');
    pg.default.types.setTypeParser(INT8, (value: string) => Number(value));
    const pool = new pg.default.Pool({ connectionString: opts.databaseUrl, max: opts.poolSize ?? 20 });
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    const prepared: RunPrepared = async <R>(name: string, query: Compiled) =>
      (await pool.query({ name, text: query.sql, values: [...query.parameters] })).rows as R[];
    return { db, kind: 'postgres', prepared, close: () => db.destroy() };
  }
  const { PGlite } = await import('@electric-sql/pglite');
  const dir = join(opts.dataDir, 'pg');
  try {
    await seedDataDir(dir);
  } catch (err) {
    // No template could be built (a read-only node_modules, say): PGlite runs initdb itself, as before.
    opts.log?.warn('embedded database template unavailable; creating the database in process', errorFields(err));
    await mkdir(dir, { recursive: true });
  }
  const pglite = new PGlite(dir, {
    parsers: { [INT8]: (value: string) => Number(value) },
    startParams: [...PGlite.defaultStartParams, ...PGLITE_SETTINGS.flatMap((setting) => ['-c', setting])],
  });
  const dialect = new PGliteDialect(pglite);
  const db = new Kysely<Database>({ dialect });
  const prepared = pglitePrepared(pglite, (work) => dialect.exclusive(work));
  return { db, kind: 'pglite', prepared, close: () => db.destroy() };
}

import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Kysely, PostgresDialect } from 'kysely';
import type { Database, Db } from './database.ts';
import { errorFields, type Logger } from '../ops/logger.ts';
import { PGliteDialect } from './pglite-dialect.ts';
import { PGliteClient } from './pglite-client.ts';
import { seedDataDir } from './pglite-template.ts';
import { bunSqlPrepared } from './bun-sql-prepared.ts';
import type { Compiled, RunPrepared } from './prepared.ts';

/** Postgres type OIDs whose default parsing we change on both drivers alike. */
const INT8 = 20;

export interface DatabaseHandle {
  db: Db;
  kind: 'postgres' | 'pglite';
  /** Named prepared statements for the hot paths (see prepared.ts). */
  prepared: RunPrepared;
  close(): Promise<void>;
}

/**
 * `DATABASE_URL` → node-postgres pool (and Bun's client for the hot statements: bun-sql-prepared.ts);
 * unset → PGlite in `DATA_DIR/pg`. Same SQL, same migrations.
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
    // DATABASE_POOL_SIZE bounds both clients together: a fifth (1–4) for the hot statements, one
    // settlement batch in flight and the occasional lease growth; the rest for node-postgres.
    const size = opts.poolSize ?? 20;
    const hotSize = Math.max(1, Math.min(4, Math.floor(size / 5)));
    const pool = new pg.default.Pool({ connectionString: opts.databaseUrl, max: Math.max(1, size - hotSize) });
    // An idle connection the server closes (a restart or failover terminates every backend)
    // is reported here; unheard, node-postgres throws it and the process dies. The pool has
    // dropped the connection already and opens a new one when asked.
    // @see https://node-postgres.com/apis/pool#error
    pool.on('error', (err) => opts.log?.warn('idle database connection lost', errorFields(err)));
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    const hot = bunSqlPrepared(opts.databaseUrl, hotSize);
    return {
      db,
      kind: 'postgres',
      prepared: hot.prepared,
      close: async () => {
        await hot.close();
        await db.destroy();
      },
    };
  }
  const dir = join(opts.dataDir, 'pg');
  try {
    await seedDataDir(dir);
  } catch (err) {
    // No template could be built (a read-only node_modules, say): PGlite runs initdb itself, as before.
    opts.log?.warn('embedded database template unavailable; creating the database in process', errorFields(err));
    await mkdir(dir, { recursive: true });
  }
  const client = await PGliteClient.open(dir);
  const dialect = new PGliteDialect(client);
  const db = new Kysely<Database>({ dialect });
  const prepared: RunPrepared = <R>(name: string, query: Compiled) =>
    dialect.exclusive(() => client.prepared<R>(name, query.sql, query.parameters));
  return { db, kind: 'pglite', prepared, close: () => db.destroy() };
}

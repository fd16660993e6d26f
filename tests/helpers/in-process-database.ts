import { afterAll, beforeAll } from 'bun:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectDatabase, type DatabaseHandle } from '../../src/db/connect.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { createTestDatabase, dropTestDatabases } from './services.ts';

/** The two databases the gateway runs on, opened in the test's own process. */
export const DATABASE_MODES = ['postgres', 'embedded'] as const;
export type DatabaseMode = (typeof DATABASE_MODES)[number];

/**
 * Registers the opening (migrated) and closing of a database of `mode` around the calling
 * `describe`: a fresh Postgres database, or the embedded PGlite in a fresh directory, each
 * removed afterwards. Returns its getter, valid once `beforeAll` ran.
 */
export function useDatabase(mode: DatabaseMode, label: string): () => DatabaseHandle {
  let database: DatabaseHandle | undefined;
  let where: { databaseUrl?: string; dataDir: string };
  beforeAll(async () => {
    where =
      mode === 'postgres'
        ? { databaseUrl: await createTestDatabase(label), dataDir: tmpdir() }
        : { dataDir: await mkdtemp(join(tmpdir(), `${label}-`)) };
    database = await connectDatabase(where);
    await migrateToLatest(database.db);
  }, 60_000);
  afterAll(async () => {
    await database?.close();
    if (where.databaseUrl) await dropTestDatabases([where.databaseUrl]);
    else await rm(where.dataDir, { recursive: true, force: true });
  });
  return () => {
    if (!database) throw new Error('the database is opened in beforeAll');
    return database;
  };
}

import { Migrator } from 'kysely';
import type { Db } from './database.ts';
import { MIGRATIONS } from './migrations/index.ts';

/**
 * Runs pending migrations. Kysely's Postgres adapter holds `pg_advisory_lock` for the whole run,
 * so several instances starting at once apply each migration exactly once.
 */
export async function migrateToLatest(db: Db): Promise<string[]> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => MIGRATIONS } });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

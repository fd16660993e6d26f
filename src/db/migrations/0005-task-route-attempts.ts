import type { Kysely } from 'kysely';

/**
 * A media task that fell back to another model (docs/routing.md) keeps the list of models it
 * tried and why each failed, `[{model, provider, error}]`, shown as the record's `attempts`.
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('tasks').addColumn('route_attempts', 'jsonb').execute();
}

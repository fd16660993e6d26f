import type { Kysely } from 'kysely';

/**
 * When a key's `budget_period` last changed (docs/keys.md). A change starts the count afresh, so
 * a task charged before it was counted in the old one: its refund must not come off the new
 * count, which never held its charge. Null: never changed.
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('api_keys').addColumn('period_changed_at', 'timestamptz').execute();
}

// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('api_keys').dropColumn('period_changed_at').execute();
}

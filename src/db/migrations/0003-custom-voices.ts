import { sql, type Kysely } from 'kysely';

/**
 * Custom cloned voices (docs/api-contract.md): which account made which voice at which
 * provider, and the stored copies of its samples that keep it permanent. The key is per provider
 * because each provider mints its own ids.
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('custom_voices')
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('voice_id', 'text', (c) => c.notNull())
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    // stored_files ids, in the order the samples were given.
    .addColumn('sample_file_ids', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('custom_voices_pkey', ['provider', 'voice_id'])
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('custom_voices').ifExists().execute();
}

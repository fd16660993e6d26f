import type { Kysely } from 'kysely';

/**
 * The `x-request-id` of the call that made a task (an LLM call or a media create), so an
 * operator can go from a task record to its log lines, its trace and the upstream's own logs.
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('tasks').addColumn('request_id', 'text').execute();
}

// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('tasks').dropColumn('request_id').execute();
}

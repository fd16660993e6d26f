import type { Kysely } from 'kysely';

/**
 * A passed-through Responses conversation as its upstream saw it (input and output items, ids
 * removed): the next turn on a Responses upstream sends these back, where the canonical
 * conversation would lose what it has no form for (file parts, an image's detail). Null when the
 * turn was translated (docs/architecture.md, "Responses upstreams").
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('llm_responses').addColumn('wire_items', 'jsonb').execute();
}

// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('llm_responses').dropColumn('wire_items').execute();
}

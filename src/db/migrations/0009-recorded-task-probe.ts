import { sql, type Kysely } from 'kysely';

/**
 * `recorded_task_ids(ids)`: which of these task ids already have a row, always by `tasks_pkey`.
 * The LLM settlement statement (a named prepared statement) asks this of every batch to charge a
 * retried batch only once. Inline, its generic plan is made after a few runs and kept: on a new
 * database `tasks` is tiny then, so the plan is a sequential scan, and it stays one while the
 * table grows (until autovacuum analyzes it) — 10+ ms per settlement after a few thousand calls.
 * A SQL function with a SET clause is planned on each call, with sequential scans off, so the
 * probe is an index lookup whatever the table's size or statistics (docs/money.md).
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create or replace function recorded_task_ids(ids text[]) returns setof text
    language sql stable rows 10 set enable_seqscan = off
    as $$ select t.id from tasks as t where t.id = any(ids) $$`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function if exists recorded_task_ids(text[])`.execute(db);
}

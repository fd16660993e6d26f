import { sql, type Kysely } from 'kysely';

/**
 * The account of each pending webhook delivery, on its row, indexed with its due time: the claim
 * takes each account's oldest due deliveries up to its share without reading another account's
 * backlog (src/webhooks/deliveries.repository.ts). Rows of instances still running the code
 * before this one come without it; the claim fills them in (the second index finds them).
 * The indexes are built with `if not exists`, so an operator with a large table can build them
 * `concurrently` before upgrading (docs/operations.md).
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table webhook_deliveries add column if not exists account_id bigint`.execute(db);
  await sql`update webhook_deliveries d set account_id = t.account_id from tasks t
    where t.id = d.task_id and d.state = 'pending'`.execute(db);
  await sql`create index if not exists webhook_deliveries_account_due on webhook_deliveries (account_id, due_at)
    where state = 'pending'`.execute(db);
  await sql`create index if not exists webhook_deliveries_account_missing on webhook_deliveries (id)
    where state = 'pending' and account_id is null`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists webhook_deliveries_account_missing`.execute(db);
  await sql`drop index if exists webhook_deliveries_account_due`.execute(db);
  await db.schema.alterTable('webhook_deliveries').dropColumn('account_id').execute();
}

import { sql, type Kysely } from 'kysely';

/**
 * A top-up may carry an `Idempotency-Key` (docs/money.md): the ledger entry it made keeps the key,
 * and one account's key credits it once however often the request is retried. Unique per account
 * among the entries that have one; every older entry has none.
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('ledger_entries').addColumn('idempotency_key', 'text').execute();
  await sql`create unique index ledger_idempotency on ledger_entries (account_id, idempotency_key) where idempotency_key is not null`.execute(
    db,
  );
}

// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('ledger_idempotency').execute();
  await db.schema.alterTable('ledger_entries').dropColumn('idempotency_key').execute();
}

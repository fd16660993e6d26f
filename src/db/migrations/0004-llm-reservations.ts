import { sql, type Kysely } from 'kysely';

/**
 * LLM money is reserved, then settled (docs/money.md): an open reservation holds the call's worst
 * case against the balance, `accounts.reserved_usd` is the sum of an account's open ones (kept in
 * the same transaction as the rows), and an expired one — its instance died — is released by a
 * sweeper. With that, the balance never needs to go below zero again, so the check of 0001 comes
 * back (NOT VALID: balances left below zero by the post-paid era are not rejected retroactively).
 *
 * `dead_letters` keeps what a batch writer could not write even alone, for an operator.
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('accounts')
    .addColumn('reserved_usd', sql`numeric(24,10)`, (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createTable('llm_reservations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    // No foreign key: every writer holds the account's row lock already, and the check would cost
    // each hold a second lookup; a deleted account's holds are swept when they expire.
    .addColumn('account_id', 'integer', (c) => c.notNull())
    .addColumn('amount_usd', sql`numeric(24,10)`, (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('llm_reservations_expiry').on('llm_reservations').column('expires_at').execute();
  await db.schema
    .createTable('dead_letters')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('error', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`alter table accounts add constraint accounts_balance_not_negative check (balance_usd >= 0) not valid`.execute(
    db,
  );
  await sql`alter table accounts add constraint accounts_reserved_not_negative check (reserved_usd >= 0)`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table accounts drop constraint if exists accounts_reserved_not_negative`.execute(db);
  await sql`alter table accounts drop constraint if exists accounts_balance_not_negative`.execute(db);
  await db.schema.dropTable('dead_letters').ifExists().execute();
  await db.schema.dropTable('llm_reservations').ifExists().execute();
  await db.schema.alterTable('accounts').dropColumn('reserved_usd').execute();
}

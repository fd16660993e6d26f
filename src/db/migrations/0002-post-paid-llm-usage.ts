import { sql, type Kysely } from 'kysely';

/**
 * LLM calls are priced after they ran (post-paid): a call admitted on a small positive balance
 * may cost more than is left, and is still charged in full — the next call is then refused.
 * The balance may therefore go below zero, so the non-negative check goes. Pre-paid task
 * charges keep their conditional update and still never overdraw.
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table accounts drop constraint if exists accounts_balance_not_negative`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table accounts add constraint accounts_balance_not_negative check (balance_usd >= 0) not valid`.execute(
    db,
  );
}

import { sql, type Kysely } from 'kysely';

/**
 * Named API keys with their own limits (docs/keys.md): the existing `api_keys` rows become the
 * accounts' `default` keys. `spend_usd` is what the key spent in its current budget period (from
 * `period_start`; lifetime when the period is null) and `reserved_usd` the sum of its open LLM
 * holds (`key_holds` rows), both written only under the key row's lock. Tasks (media and LLM
 * records) name the key that created them.
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('api_keys')
    .addColumn('name', 'text', (c) => c.notNull().defaultTo('default'))
    .addColumn('budget_usd', sql`numeric(24,10)`)
    .addColumn('budget_period', 'text', (c) => c.check(sql`budget_period in ('day','week','month')`))
    .addColumn('models', 'jsonb')
    .addColumn('rpm', 'integer')
    .addColumn('tpm', 'integer')
    .addColumn('expires_at', 'timestamptz')
    .addColumn('last_used_at', 'timestamptz')
    .addColumn('spend_usd', sql`numeric(24,10)`, (c) => c.notNull().defaultTo(0))
    .addColumn('reserved_usd', sql`numeric(24,10)`, (c) => c.notNull().defaultTo(0))
    .addColumn('period_start', 'timestamptz')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`alter table api_keys add constraint api_keys_reserved_not_negative check (reserved_usd >= 0)`.execute(db);
  await db.schema
    .createTable('key_holds')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('key_id', 'integer', (c) => c.notNull())
    .addColumn('amount_usd', sql`numeric(24,10)`, (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('key_holds_expiry').on('key_holds').column('expires_at').execute();
  await db.schema.alterTable('tasks').addColumn('key_id', 'integer').execute();
  await sql`create index tasks_account_key_newest on tasks (account_id, key_id, created_at desc, seq desc) where key_id is not null`.execute(
    db,
  );
}

// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists tasks_account_key_newest`.execute(db);
  await db.schema.alterTable('tasks').dropColumn('key_id').execute();
  await db.schema.dropTable('key_holds').ifExists().execute();
  await sql`alter table api_keys drop constraint if exists api_keys_reserved_not_negative`.execute(db);
  for (const column of [
    'name',
    'budget_usd',
    'budget_period',
    'models',
    'rpm',
    'tpm',
    'expires_at',
    'last_used_at',
    'spend_usd',
    'reserved_usd',
    'period_start',
    'updated_at',
  ])
    await db.schema.alterTable('api_keys').dropColumn(column).execute();
}

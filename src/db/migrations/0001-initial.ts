import { sql, type Kysely } from 'kysely';

/**
 * Every table the product needs, created up front so later work adds columns, not redesigns.
 * Typed `Kysely<any>` on purpose: a migration is frozen history and must not follow later
 * changes to the `Database` interface.
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('accounts')
    .addColumn('id', 'integer', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('balance_usd', sql`numeric(24,10)`, (c) => c.notNull().defaultTo(0))
    .addColumn('topped_up_usd', sql`numeric(24,10)`, (c) => c.notNull().defaultTo(0))
    .addColumn('webhook_signing_enabled', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('webhook_secret', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('accounts_balance_not_negative', sql`balance_usd >= 0`)
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'integer', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('key_prefix', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('revoked_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('api_keys_account').on('api_keys').column('account_id').execute();

  await db.schema
    .createTable('ledger_entries')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('amount_usd', sql`numeric(24,10)`, (c) => c.notNull())
    .addColumn('balance_after_usd', sql`numeric(24,10)`, (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('topup','charge','refund','adjustment')`))
    .addColumn('task_id', 'text')
    .addColumn('category', 'text')
    .addColumn('note', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex('ledger_account_time')
    .on('ledger_entries')
    .columns(['account_id', 'created_at'])
    .execute();
  await db.schema.createIndex('ledger_task').on('ledger_entries').column('task_id').execute();

  await db.schema
    .createTable('tasks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('seq', 'bigint', (c) => c.notNull().generatedAlwaysAsIdentity().unique())
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('category', 'text')
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('processing','completed','failed')`))
    .addColumn('input', 'jsonb', (c) => c.notNull())
    .addColumn('output', 'jsonb')
    .addColumn('error_message', 'text')
    .addColumn('error_detail', 'jsonb')
    .addColumn('cost_usd', sql`numeric(24,10)`, (c) => c.notNull().defaultTo(0))
    .addColumn('callback_url', 'text')
    .addColumn('idempotency_key', 'text')
    .addColumn('request_hash', 'text')
    .addColumn('operation', 'jsonb')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires_at', 'timestamptz')
    .addColumn('run_after', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('finished_at', 'timestamptz')
    .execute();
  await db.schema
    .createIndex('tasks_account_newest')
    .on('tasks')
    .columns(['account_id', 'created_at desc', 'seq desc'])
    .execute();
  await sql`create index tasks_runnable on tasks (run_after) where status = 'processing' and category <> 'llm'`.execute(
    db,
  );
  await sql`create unique index tasks_idempotency on tasks (account_id, idempotency_key) where idempotency_key is not null`.execute(
    db,
  );

  await db.schema
    .createTable('callback_attempts')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('task_id', 'text', (c) => c.notNull().references('tasks.id').onDelete('cascade'))
    .addColumn('sent_at', 'timestamptz', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('status_text', 'text', (c) => c.notNull())
    .addColumn('trigger', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('callback_attempts_task').on('callback_attempts').columns(['task_id', 'id']).execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('task_id', 'text', (c) => c.notNull().references('tasks.id').onDelete('cascade'))
    .addColumn('attempt_no', 'integer', (c) => c.notNull())
    .addColumn('trigger', 'text', (c) => c.notNull())
    .addColumn('due_at', 'timestamptz', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull().defaultTo('pending'))
    .addColumn('payload', 'jsonb', (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index webhook_deliveries_due on webhook_deliveries (due_at) where state = 'pending'`.execute(db);

  await db.schema
    .createTable('stored_files')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'integer', (c) => c.references('accounts.id').onDelete('set null'))
    .addColumn('storage_key', 'text', (c) => c.notNull())
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('size_bytes', 'bigint', (c) => c.notNull())
    .addColumn('sha256', 'text')
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('llm_responses')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('previous_response_id', 'text')
    .addColumn('messages', 'jsonb', (c) => c.notNull())
    .addColumn('output_items', 'jsonb', (c) => c.notNull())
    .addColumn('response', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index llm_responses_items on llm_responses using gin (output_items jsonb_path_ops)`.execute(db);

  await db.schema
    .createTable('model_registry')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('added_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    'model_registry',
    'llm_responses',
    'stored_files',
    'webhook_deliveries',
    'callback_attempts',
    'tasks',
    'ledger_entries',
    'api_keys',
    'accounts',
  ]) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}

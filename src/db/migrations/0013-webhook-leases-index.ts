import { sql, type Kysely } from 'kysely';

/**
 * Deliveries in flight (pending, leased until a time still ahead) found without reading the
 * whole queue: every claim counts them per account, so one account's hanging receiver cannot
 * take every delivery slot (src/webhooks/deliveries.repository.ts).
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index if not exists webhook_deliveries_leased on webhook_deliveries (lease_expires_at) where state = 'pending' and lease_expires_at is not null`.execute(
    db,
  );
}

// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists webhook_deliveries_leased`.execute(db);
}

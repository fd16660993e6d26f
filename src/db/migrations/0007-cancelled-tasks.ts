import { sql, type Kysely } from 'kysely';

/**
 * Tasks can be cancelled by their owner (`POST /v1/tasks/{id}/cancel`, docs/api-contract.md):
 * `cancelled` joins the statuses the check of 0001 allows. Postgres named that inline check
 * `tasks_status_check`.
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table tasks drop constraint tasks_status_check`.execute(db);
  await sql`alter table tasks add constraint tasks_status_check
    check (status in ('processing', 'completed', 'failed', 'cancelled'))`.execute(db);
}

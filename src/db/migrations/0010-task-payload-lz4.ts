import { sql, type Kysely } from 'kysely';

/**
 * The calls' recorded request and answer (`tasks.input`, `tasks.output`) are compressed with lz4
 * instead of Postgres's default pglz when the server has lz4 (Debian's and the official images'
 * do; the embedded PGlite does not, and keeps pglz). A non-streamed answer waits for its
 * settlement's commit, which compresses the call's input on the way: with a 59 KB recorded
 * conversation that statement took 4.6–5.5 ms with pglz and 1.7–2.0 with lz4
 * (`bun run bench/recorded-payload.ts`, bench/README.md). Only values written from now on change;
 * older ones stay readable as they are. A change of the columns' attributes, not a rewrite of
 * the table.
 * @see https://www.postgresql.org/docs/current/storage-toast.html
 */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function up(db: Kysely<any>): Promise<void> {
  if (!(await hasLz4(db))) return;
  await sql`alter table tasks alter column input set compression lz4, alter column output set compression lz4`.execute(
    db,
  );
}

// biome-ignore lint/suspicious/noExplicitAny: frozen migration
export async function down(db: Kysely<any>): Promise<void> {
  if (!(await hasLz4(db))) return;
  await sql`alter table tasks alter column input set compression default, alter column output set compression default`.execute(
    db,
  );
}

/** Whether the server was built with lz4: it is then one of `default_toast_compression`'s values. */
// biome-ignore lint/suspicious/noExplicitAny: frozen migration
async function hasLz4(db: Kysely<any>): Promise<boolean> {
  const { rows } = await sql<{ lz4: boolean }>`
    select 'lz4' = any(enumvals) as lz4 from pg_settings where name = 'default_toast_compression'`.execute(db);
  return rows[0]?.lz4 === true;
}

import { sql } from 'kysely';
import type { Db } from './database.ts';

/** One round trip that proves the database answers (the readiness check). */
export async function pingDatabase(db: Db): Promise<void> {
  await sql`select 1`.execute(db);
}

import type { DbOrTrx } from '../db/database.ts';

/**
 * Sets a record aside that could not be written where it belongs, so an operator can replay it
 * instead of it being lost. `error` is stored as JSON-escaped text: a message may hold a NUL byte,
 * which a Postgres text column refuses.
 */
export async function setAside(db: DbOrTrx, kind: string, payload: string, error: string): Promise<void> {
  await db
    .insertInto('dead_letters')
    .values({ kind, payload, error: JSON.stringify(error).slice(1, -1) })
    .execute();
}

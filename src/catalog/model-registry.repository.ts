import { sql } from 'kysely';
import type { Db } from '../db/database.ts';

/**
 * The `model_registry` table remembers when each configured model was first seen, so a model's
 * `added` date survives restarts and config edits. Registers the ids not seen before and answers
 * every id's first-seen time in Unix seconds.
 */
export async function registerModels(db: Db, ids: readonly string[]): Promise<Map<string, number>> {
  if (ids.length === 0) return new Map();
  await db
    .insertInto('model_registry')
    .values(ids.map((id) => ({ id })))
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
  const rows = await db
    .selectFrom('model_registry')
    .select(['id', sql<number>`extract(epoch from added_at)::int`.as('added')])
    .where('id', 'in', ids)
    .execute();
  return new Map(rows.map((r) => [r.id, r.added]));
}

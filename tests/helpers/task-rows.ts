import { sql } from 'kysely';
import type { Db } from '../../src/db/database.ts';

/**
 * A task row written straight into the database, for in-process tests that need one without the
 * API's creation path (its charge, its queue): due now, input `{}`. Returns its id.
 */
export async function insertTaskRow(
  db: Db,
  row: {
    accountId: number;
    model?: string;
    status?: 'processing' | 'completed' | 'failed' | 'cancelled';
    costUsd?: number;
    callbackUrl?: string;
    /** Finished now (a webhook's task); a processing task has no finish time. */
    finished?: boolean;
  },
): Promise<string> {
  const id = crypto.randomUUID();
  const model = row.model ?? 'sandbox/image';
  await sql`insert into tasks (id, account_id, model, provider, category, status, input, cost_usd, callback_url, finished_at, run_after)
    values (${id}, ${row.accountId}, ${model}, ${model.split('/')[0]}, 'image', ${row.status ?? 'processing'}, '{}'::jsonb,
      ${row.costUsd ?? 0}, ${row.callbackUrl ?? null}, ${row.finished ? sql`now()` : null}, now())`.execute(db);
  return id;
}

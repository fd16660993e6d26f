import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import type { Logger } from '../ops/logger.ts';
import { errorFields } from '../ops/logger.ts';

/** How long a result waits for a step in flight to hand its task back. */
const WAIT_FOR_LEASE_MS = 60_000;
const RETRY_EVERY_MS = 100;

export type StoreOutcome = 'stored' | 'finished' | 'unknown' | 'busy';

/**
 * Stores a verified upstream result on a processing task's `operation` (as `webhook`) and makes
 * the task due now: the runner's next `poll` step reads it and finishes the task through the one
 * path that finishes tasks (finishTask: once, with money and callbacks). Only written while no
 * step holds the task, so the step's own write of `operation` never drops it; and only when
 * `operation.id` is the upstream job the result is about. Duplicate webhooks store the same
 * result again, or find the task finished: both harmless.
 */
export async function storeWebhookResult(db: Db, providerId: string, taskId: string, operationId: string, result: unknown): Promise<StoreOutcome> {
  const stored = await sql<{ id: string }>`
    update tasks set operation = operation || jsonb_build_object('webhook', ${JSON.stringify(result)}::jsonb),
      run_after = now(), updated_at = now()
    where id = ${taskId} and provider = ${providerId} and status = 'processing' and operation->>'id' = ${operationId}
      and (lease_owner is null or lease_expires_at < now())
    returning id`.execute(db);
  if (stored.rows.length) return 'stored';
  const row = await db.selectFrom('tasks').select(['status', sql<string | null>`operation->>'id'`.as('operation_id')]).where('id', '=', taskId).where('provider', '=', providerId).executeTakeFirst();
  if (!row || row.operation_id !== operationId) return 'unknown';
  if (row.status !== 'processing') return 'finished';
  return 'busy';
}

/**
 * The webhook answers at once; when a step is working on the task right now the result is
 * stored as soon as that step hands the task back (a poll in flight), or not at all when that
 * step finishes the task (it saw the same end).
 */
export function storeWhenFree(db: Db, log: Logger, providerId: string, taskId: string, operationId: string, result: unknown): Promise<StoreOutcome> {
  const deadline = Date.now() + WAIT_FOR_LEASE_MS;
  const attempt = async (): Promise<StoreOutcome> => {
    for (;;) {
      const outcome = await storeWebhookResult(db, providerId, taskId, operationId, result);
      if (outcome !== 'busy' || Date.now() > deadline) return outcome;
      await Bun.sleep(RETRY_EVERY_MS);
    }
  };
  return attempt().catch((err: unknown) => {
    log.warn('upstream webhook result not stored; the next poll will find it', { task_id: taskId, ...errorFields(err) });
    return 'busy' as const;
  });
}

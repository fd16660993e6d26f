import { sql } from 'kysely';
import type { DbOrTrx } from '../db/database.ts';

/** A model a media task tried and why it failed, as the task record lists it. */
export interface RouteAttempt {
  model: string;
  provider: string;
  error: string;
}

/**
 * Locks a processing task this instance holds, for a fallback decision: its current model and
 * charge, the models tried so far, its API key and the models that key may use (null: any). Undefined when
 * it finished or was taken over meanwhile.
 */
export async function lockForFallback(trx: DbOrTrx, taskId: string, owner: string) {
  const row = await trx
    .selectFrom('tasks')
    .select((eb) => [
      'model',
      'provider',
      'cost_usd',
      'route_attempts',
      'key_id',
      eb.selectFrom('api_keys').select('api_keys.models').whereRef('api_keys.id', '=', 'tasks.key_id').as('key_models'),
    ])
    .where('id', '=', taskId)
    .where('status', '=', 'processing')
    .where('lease_owner', '=', owner)
    .forUpdate()
    .executeTakeFirst();
  if (!row) return undefined;
  const attempts = Array.isArray(row.route_attempts) ? (row.route_attempts as RouteAttempt[]) : [];
  const keyModels = Array.isArray(row.key_models) ? (row.key_models as string[]) : null;
  return {
    model: row.model,
    provider: row.provider,
    costUsd: String(row.cost_usd),
    attempts,
    keyId: row.key_id,
    keyModels,
  };
}

/**
 * Moves the task to another model: the new model, provider and charge, the attempt list, and a
 * fresh start (no upstream operation, no step retries), due now for any instance.
 */
export async function switchTaskModel(
  trx: DbOrTrx,
  taskId: string,
  to: { model: string; provider: string; costUsd: string; attempts: RouteAttempt[] },
): Promise<void> {
  await trx
    .updateTable('tasks')
    .set({
      model: to.model,
      provider: to.provider,
      cost_usd: to.costUsd,
      route_attempts: JSON.stringify(to.attempts),
      operation: null,
      attempts: 0,
      run_after: sql`now()`,
      updated_at: sql`now()`,
      lease_owner: null,
      lease_expires_at: null,
    })
    .where('id', '=', taskId)
    .execute();
}

/** Keeps the attempt list of a task about to fail with no fallback left. */
export async function saveRouteAttempts(trx: DbOrTrx, taskId: string, attempts: RouteAttempt[]): Promise<void> {
  await trx
    .updateTable('tasks')
    .set({ route_attempts: JSON.stringify(attempts), updated_at: sql`now()` })
    .where('id', '=', taskId)
    .execute();
}

/**
 * Before a fallback's transaction, read without a lock: the model the task was created for (the
 * first attempt's, once it fell back), the models tried so far, and the models its key may use
 * (null: any).
 */
export async function fallbackStartOf(
  db: DbOrTrx,
  taskId: string,
): Promise<{ requested: string; tried: string[]; keyModels: string[] | null } | undefined> {
  const row = await db
    .selectFrom('tasks')
    .select((eb) => [
      'model',
      'route_attempts',
      eb.selectFrom('api_keys').select('api_keys.models').whereRef('api_keys.id', '=', 'tasks.key_id').as('key_models'),
    ])
    .where('id', '=', taskId)
    .executeTakeFirst();
  if (!row) return undefined;
  const attempts = Array.isArray(row.route_attempts) ? (row.route_attempts as RouteAttempt[]) : [];
  return {
    requested: attempts[0]?.model ?? row.model,
    tried: [...attempts.map((a) => a.model), row.model],
    keyModels: Array.isArray(row.key_models) ? (row.key_models as string[]) : null,
  };
}

import { sql } from 'kysely';
import type { Db, DbOrTrx } from '../db/database.ts';
import { toStorable } from '../http/hostile-json.ts';

/**
 * The tasks table as the runner's durable queue: due media tasks are leased to one instance at a
 * time (`FOR UPDATE SKIP LOCKED`), worked one step, and released until their next poll. Every
 * write here is conditioned on the lease, so an instance that lost its lease changes nothing.
 */

/** A task as claimed, with what a step needs. */
export interface ClaimedTask {
  id: string;
  account_id: number;
  model: string;
  provider: string;
  category: string | null;
  input: unknown;
  operation: unknown;
  attempts: number;
  cost_usd: string;
  callback_url: string | null;
  /** The `x-request-id` of the create call, sent upstream with each step. */
  request_id: string | null;
  created_at: Date;
}

const leaseUntil = (leaseMs: number) => sql<Date>`now() + ${leaseMs} * interval '1 millisecond'`;

/** Leases up to `limit` due, unleased (or lease-expired) media tasks to `owner`. */
export async function claimDueTasks(db: Db, owner: string, leaseMs: number, limit: number): Promise<ClaimedTask[]> {
  const result = await sql<ClaimedTask>`
    update tasks set lease_owner = ${owner}, lease_expires_at = ${leaseUntil(leaseMs)},
      attempts = attempts + 1, updated_at = now()
    where id in (
      select id from tasks
      where status = 'processing' and category <> 'llm' and run_after <= now()
        and (lease_expires_at is null or lease_expires_at < now())
      order by run_after limit ${limit} for update skip locked)
    returning id, account_id, model, provider, category, input, operation, attempts, cost_usd, callback_url, request_id, created_at`.execute(
    db,
  );
  return result.rows;
}

/** Media tasks not yet finished (queued or running), on every instance: the queue depth gauge. */
export async function countProcessingTasks(db: Db): Promise<number> {
  const result = await sql<{ n: string }>`
    select count(*) as n from tasks where status = 'processing' and category <> 'llm'`.execute(db);
  return Number(result.rows[0]?.n ?? 0);
}

/** Hands a task back until `runAfterMs` from now, with the upstream `operation` when the step changed it. */
export async function releaseTask(
  db: Db,
  taskId: string,
  owner: string,
  next: { operation?: unknown; runAfterMs: number },
): Promise<void> {
  await db
    .updateTable('tasks')
    .set({
      // Upstream ids and state: made storable, or one odd answer fails every write of this task.
      ...(next.operation !== undefined ? { operation: JSON.stringify(toStorable(next.operation)) } : {}),
      run_after: sql`now() + ${next.runAfterMs} * interval '1 millisecond'`,
      lease_owner: null,
      lease_expires_at: null,
      updated_at: sql`now()`,
    })
    .where('id', '=', taskId)
    .where('lease_owner', '=', owner)
    .execute();
}

export async function renewTaskLease(db: Db, taskId: string, owner: string, leaseMs: number): Promise<void> {
  await db
    .updateTable('tasks')
    .set({ lease_expires_at: leaseUntil(leaseMs) })
    .where('id', '=', taskId)
    .where('lease_owner', '=', owner)
    .execute();
}

/** Gives up `owner`'s leases on these tasks at once (shutdown), so any instance can take them. */
export async function dropTaskLeases(db: Db, taskIds: string[], owner: string): Promise<void> {
  if (taskIds.length === 0) return;
  await db
    .updateTable('tasks')
    .set({ lease_owner: null, lease_expires_at: null })
    .where('id', 'in', taskIds)
    .where('lease_owner', '=', owner)
    .execute();
}

export type FinalState =
  | { status: 'completed'; output: Record<string, unknown>; costUsd: string }
  | { status: 'failed'; message: string; detail?: unknown; costUsd: string };

/** Moves a task out of `processing` while `owner` holds it; false when it had already left (or was taken over). */
export async function markTaskFinished(trx: DbOrTrx, taskId: string, owner: string, end: FinalState): Promise<boolean> {
  const updated = await trx
    .updateTable('tasks')
    .set({
      status: end.status,
      output: end.status === 'completed' ? JSON.stringify(end.output) : null,
      error_message: end.status === 'failed' ? end.message : null,
      error_detail: end.status === 'failed' && end.detail !== undefined ? JSON.stringify(end.detail) : null,
      cost_usd: end.costUsd,
      finished_at: sql`now()`,
      updated_at: sql`now()`,
      lease_owner: null,
      lease_expires_at: null,
    })
    .where('id', '=', taskId)
    .where('status', '=', 'processing')
    .where('lease_owner', '=', owner)
    .returning('finished_at')
    .executeTakeFirst();
  return updated !== undefined;
}

export type StoreOutcome = 'stored' | 'finished' | 'unknown' | 'busy';

/**
 * Stores a verified upstream result on a processing task's `operation` (as `webhook`) and makes
 * the task due now, so the runner's next poll finishes it. Only written while no step holds the
 * task (a step's own write of `operation` would drop it) and only when `operation.id` is the
 * upstream job the result is about. Otherwise says why not: the task is unknown, finished, or busy.
 */
export async function storeUpstreamResult(
  db: Db,
  providerId: string,
  taskId: string,
  operationId: string,
  result: unknown,
): Promise<StoreOutcome> {
  const stored = await sql<{ id: string }>`
    update tasks set operation = operation || jsonb_build_object('webhook', ${JSON.stringify(toStorable(result))}::jsonb),
      run_after = now(), updated_at = now()
    where id = ${taskId} and provider = ${providerId} and status = 'processing' and operation->>'id' = ${operationId}
      and (lease_owner is null or lease_expires_at < now())
    returning id`.execute(db);
  if (stored.rows.length) return 'stored';
  const row = await db
    .selectFrom('tasks')
    .select(['status', sql<string | null>`operation->>'id'`.as('operation_id')])
    .where('id', '=', taskId)
    .where('provider', '=', providerId)
    .executeTakeFirst();
  if (!row || row.operation_id !== operationId) return 'unknown';
  if (row.status !== 'processing') return 'finished';
  return 'busy';
}

import { sql } from 'kysely';
import type { Db, DbOrTrx } from '../db/database.ts';

/** One delivery as claimed, with what sending it needs (the task's URL, the account's signing). */
export interface ClaimedDelivery {
  id: number;
  task_id: string;
  attempt_no: number;
  trigger: 'auto' | 'manual';
  payload: unknown;
  callback_url: string | null;
  finished_at: Date | null;
  webhook_signing_enabled: boolean;
  webhook_secret: string | null;
}

export interface NewDelivery {
  taskId: string;
  attemptNo: number;
  trigger: 'auto' | 'manual';
  payload: unknown;
  /** Claimed by this instance from the start, so the background deliverer leaves it alone. */
  claimedBy?: { owner: string; leaseMs: number };
}

/** Schedules one delivery, due now; returns its id. */
export async function scheduleDelivery(trx: DbOrTrx, d: NewDelivery): Promise<number> {
  const row = await trx
    .insertInto('webhook_deliveries')
    .values({
      task_id: d.taskId,
      account_id: sql<number>`(select account_id from tasks where id = ${d.taskId})`,
      attempt_no: d.attemptNo,
      trigger: d.trigger,
      due_at: sql`now()`,
      state: 'pending',
      payload: JSON.stringify(d.payload),
      lease_owner: d.claimedBy?.owner ?? null,
      lease_expires_at: d.claimedBy ? sql`now() + ${d.claimedBy.leaseMs} * interval '1 millisecond'` : null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

/** A task's deliveries: those made and those still pending. */
export async function countDeliveries(trx: DbOrTrx, taskId: string): Promise<{ made: number; pending: number }> {
  const counts = await trx
    .selectFrom('webhook_deliveries')
    .select([
      sql<string>`count(*) filter (where state = 'done')`.as('made'),
      sql<string>`count(*) filter (where state = 'pending')`.as('pending'),
    ])
    .where('task_id', '=', taskId)
    .executeTakeFirstOrThrow();
  return { made: Number(counts.made), pending: Number(counts.pending) };
}

/** `due` deliveries of `accounts` (accountsWithPending), or the one `id` this owner holds. */
export type ClaimWhich = { due: number; accounts: readonly number[] } | { id: number };

/**
 * Deliveries one account may have in flight at once, on all instances together. A receiver that
 * hangs holds its slot for the send's timeout (10 s): without a bound, one account's failing
 * tasks (refunded, so free to make) took every slot and delayed every other account's callbacks.
 */
export const MAX_IN_FLIGHT_PER_ACCOUNT = 32;

/** Accounts one claim serves at most, from where the last one stopped: its cost stays bounded however many have pending rows. */
export const ACCOUNTS_PER_CLAIM = 256;

/**
 * Up to `limit` accounts with pending deliveries whose id is above `after`, in order: walked one
 * index probe each (`webhook_deliveries_account_due`, migration 0015), never row by row.
 */
export async function accountsWithPending(db: Db, after: number, limit = ACCOUNTS_PER_CLAIM): Promise<number[]> {
  const result = await sql<{ account_id: string }>`
    with recursive accounts(account_id, n) as (
      (select account_id, 1 from webhook_deliveries
        where state = 'pending' and account_id > ${after} order by account_id limit 1)
      union all
      select (select w.account_id from webhook_deliveries w
          where w.state = 'pending' and w.account_id > a.account_id order by w.account_id limit 1), a.n + 1
        from accounts a where a.account_id is not null and a.n < ${limit})
    select account_id from accounts where account_id is not null`.execute(db);
  return result.rows.map((row) => Number(row.account_id));
}

/**
 * Due, free deliveries of `accounts`, each account's oldest up to what it may still have in
 * flight, so a claim never reads one account's backlog to reach another's, and an account near
 * its bound cannot fill the claim.
 */
const fairlyDue = (accounts: readonly number[]) => sql`
  id = any(array(
    with busy as (
      select account_id, count(*)::int as n from webhook_deliveries
      where state = 'pending' and lease_expires_at is not null and lease_expires_at >= now()
      group by account_id)
    select c.id from unnest(${accounts}::bigint[]) as a(account_id)
      left join busy b on b.account_id = a.account_id
      cross join lateral (
        select d.id from webhook_deliveries d
        where d.account_id = a.account_id and d.state = 'pending' and d.due_at <= now()
          and (d.lease_expires_at is null or d.lease_expires_at < now())
        order by d.due_at
        limit greatest(0, ${MAX_IN_FLIGHT_PER_ACCOUNT} - coalesce(b.n, 0))) c))
  and state = 'pending' and (lease_expires_at is null or lease_expires_at < now())`;

/**
 * Pending deliveries without their account (scheduled by an instance from before migration 0015,
 * during a rolling upgrade) get it, so the fair claim sees them. Cheap when there are none: a
 * partial index holds exactly those rows.
 */
export async function fillMissingAccounts(db: Db): Promise<void> {
  await sql`update webhook_deliveries d set account_id = t.account_id from tasks t
    where d.state = 'pending' and d.account_id is null and t.id = d.task_id`.execute(db);
}

/**
 * Leases deliveries to `owner` (`SKIP LOCKED`, like tasks): up to `due` of those due now and
 * free (fairly across accounts, oldest first), or the one `id` this owner already holds (a
 * manual redelivery it scheduled). The limit counts only rows this claim could lock, so
 * instances claiming at once share the due rows instead of skipping the same ones.
 */
export async function claimDeliveries(
  db: Db,
  owner: string,
  leaseMs: number,
  which: ClaimWhich,
): Promise<ClaimedDelivery[]> {
  const [pick, limit] =
    'due' in which
      ? [fairlyDue(which.accounts), which.due]
      : [sql`id = ${which.id} and state = 'pending' and lease_owner = ${owner}`, 1];
  const result = await sql<ClaimedDelivery>`
    with claimed as (
      update webhook_deliveries set lease_owner = ${owner},
        lease_expires_at = now() + ${leaseMs} * interval '1 millisecond'
      where id in (
        select id from webhook_deliveries where ${pick} order by due_at limit ${limit} for update skip locked)
      returning id, task_id, attempt_no, trigger, payload)
    select c.id, c.task_id, c.attempt_no, c.trigger, c.payload, t.callback_url, t.finished_at,
           a.webhook_signing_enabled, a.webhook_secret
    from claimed c join tasks t on t.id = c.task_id join accounts a on a.id = t.account_id`.execute(db);
  return result.rows.map((row) => ({ ...row, id: Number(row.id) }));
}

/**
 * Marks deliveries made (whatever the answer) and lets go of their leases; answers the ids it
 * moved. One already done was also sent by another instance that took it over after this one's
 * lease ran out (its result was written late): its retry is that instance's to schedule.
 */
export async function markDone(trx: DbOrTrx, ids: number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await trx
    .updateTable('webhook_deliveries')
    .set({ state: 'done', lease_owner: null, lease_expires_at: null })
    .where('id', 'in', ids)
    .where('state', '=', 'pending')
    .returning('id')
    .execute();
  return new Set(rows.map((r) => Number(r.id)));
}

export interface Retry {
  taskId: string;
  attemptNo: number;
  /** When the retry is due: `base` plus `delaySec`. */
  base: Date;
  delaySec: number;
  payload: unknown;
}

/** Schedules automatic retries in one statement, skipping any task whose log already holds `maxPerTask`. */
export async function scheduleRetries(trx: DbOrTrx, retries: Retry[], maxPerTask: number): Promise<void> {
  if (retries.length === 0) return;
  await sql`
    insert into webhook_deliveries (task_id, account_id, attempt_no, trigger, due_at, state, payload)
    select r.task_id, (select t.account_id from tasks t where t.id = r.task_id), r.attempt_no, 'auto',
      r.base + r.delay_sec * interval '1 second', 'pending', r.payload
    from unnest(${retries.map((r) => r.taskId)}::text[], ${retries.map((r) => r.attemptNo)}::int[],
                ${retries.map((r) => r.base.toISOString())}::timestamptz[], ${retries.map((r) => r.delaySec)}::int[],
                ${retries.map((r) => JSON.stringify(r.payload))}::jsonb[]) as r(task_id, attempt_no, base, delay_sec, payload)
    where (select count(*) from webhook_deliveries d where d.task_id = r.task_id) < ${maxPerTask}`.execute(trx);
}

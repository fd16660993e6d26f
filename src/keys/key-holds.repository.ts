import { sql } from 'kysely';
import type { Db, DbOrTrx } from '../db/database.ts';
import type { LeaseGrowth } from '../accounts/lease-pool.ts';
import {
  type GrownLease,
  leaseAmount,
  leaseGrowthRequests,
  upsertLeaseRows,
} from '../accounts/lease-growth.repository.ts';
import { toUnits, type UsdUnits } from '../accounts/money.ts';
import { spendNow } from './key-period.repository.ts';

/**
 * Instance leases on key budgets (docs/keys.md): one `key_holds` row per instance and key, counted in
 * `api_keys.reserved_usd`, from which the instance grants its calls' holds in memory
 * (src/keys/key-budgets.ts). Rows are written only under the key row's lock, so concurrent
 * instances never lease more than `budget − spent − held` between them.
 */

/**
 * One statement for a batch of key lease growths (one lease per key): the keys are locked in id
 * order and each lease grows by what `leaseAmount` grants from the key's room, or not at all when
 * that is less than `min`. A key without a budget (any more) grants what is asked.
 */
export async function growKeyLeases(db: Db, batch: LeaseGrowth[], ttlMs: number): Promise<GrownLease[]> {
  const result = await sql<GrownLease>`
    with req as (
      ${leaseGrowthRequests(batch, 'key_id')}
    ), locked as (
      select k.id, k.budget_usd is not null as budgeted, coalesce(k.budget_usd - ${spendNow('k')} - k.reserved_usd, 0) as spendable
      from api_keys as k where k.id in (select key_id from req) order by k.id for no key update
    ), granted as (
      select r.id, r.key_id, case when l.budgeted then ${leaseAmount(sql`l.spendable`)} else r.want end as amount
      from req as r join locked as l on l.id = r.key_id
      where r.min > 0 and (not l.budgeted or l.spendable >= r.min)
    ), added as (
      update api_keys as k set reserved_usd = k.reserved_usd + g.amount from granted as g where k.id = g.key_id returning k.id
    ), upserted as (
      ${upsertLeaseRows('key_holds', 'key_id', ttlMs)}
    )
    select r.id, coalesce(g.amount, 0)::text as granted, coalesce(l.spendable, 0)::text as spendable,
           (select count(*) from upserted) + (select count(*) from added) as written
    from req as r left join granted as g on g.id = r.id left join locked as l on l.id = r.key_id`.execute(db);
  return result.rows;
}

/** Deletes leases (by id, or up to 1000 expired ones) and takes them off their keys' `reserved_usd`. */
export async function releaseKeyHolds(db: DbOrTrx, which: { ids: string[] } | { expired: true }): Promise<void> {
  const condition =
    'ids' in which
      ? sql`id = any(${which.ids}::text[])`
      : sql`id in (select id from key_holds where expires_at < now() limit 1000)`;
  await sql`
    with gone as (delete from key_holds where ${condition} returning key_id, amount_usd)
    update api_keys as k set reserved_usd = greatest(k.reserved_usd - g.total, 0)
    from (select key_id, sum(amount_usd) as total from gone group by key_id) as g
    where k.id = g.key_id`.execute(db);
}

/** Pushes the leases' expiry forward; answers the ids still there (a swept lease is gone). */
export async function renewKeyHolds(db: DbOrTrx, ids: string[], ttlMs: number): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const renewed = await sql<{
    id: string;
  }>`update key_holds set expires_at = now() + ${`${ttlMs} milliseconds`}::interval
    where id = any(${ids}::text[]) returning id`.execute(db);
  return new Set(renewed.rows.map((r) => r.id));
}

/** Locks the keys in id order and returns what each may still spend (budget − spent − held). */
export async function lockKeyBudgets(trx: DbOrTrx, keyIds: number[]): Promise<Map<number, UsdUnits | null>> {
  const ids = [...new Set(keyIds)].sort((a, b) => a - b);
  if (ids.length === 0) return new Map();
  const rows = await sql<{ id: number; available: string | null }>`
    select k.id, (k.budget_usd - ${spendNow('k')} - k.reserved_usd)::text as available
    from api_keys as k where k.id = any(${ids}::int[]) order by k.id for no key update`.execute(trx);
  return new Map(rows.rows.map((r) => [r.id, r.available === null ? null : toUnits(r.available)]));
}

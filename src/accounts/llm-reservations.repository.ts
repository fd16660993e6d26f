import { type CompiledQuery, type RawBuilder, sql } from 'kysely';
import type { Db, DbOrTrx } from '../db/database.ts';
import type { LeaseGrowth } from './lease-pool.ts';
import { fromUnits, toUnits } from './money.ts';

/**
 * The `llm_reservations` table: one row per instance lease on an account's balance, its amount
 * counted in `accounts.reserved_usd` (docs/money.md). Every writer of those two columns that decides
 * from them locks the accounts first, in id order, so writers never deadlock.
 */

/**
 * What a lease growth grants (`r` the request, `spendable` what the owner can still spend): `base`
 * (the call and a few more of its size) and, when the instance asks for more (`want`: its lease ran
 * short often lately), up to `want` but no more than a 32nd of what the owner can spend, so one
 * instance's unused headroom never keeps much from the others and from the owner's media tasks.
 * Never more than `spendable`; the caller grants nothing when `spendable` is below `min`.
 */
export function leaseAmount(spendable: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`least(${spendable}, greatest(r.base, least(r.want, ${spendable} / 32)))`;
}

export interface GrownLease {
  id: string;
  granted: string;
  spendable: string;
}

/**
 * One statement for a batch of lease growths (one lease per account, so no two requests share
 * an account): the accounts are locked in id order and each lease grows by what `leaseAmount`
 * grants, or not at all when the account can spend less than `min`. Compiled, so the caller
 * can run it as a named prepared statement.
 */
export function growLeasesStatement(db: Db, batch: LeaseGrowth[], ttlMs: number): CompiledQuery<GrownLease> {
  return sql`
    with req as (
      select * from unnest(${batch.map((r) => r.leaseId)}::text[], ${batch.map((r) => r.ownerId)}::int[],
                           ${batch.map((r) => fromUnits(r.min))}::numeric[], ${batch.map((r) => fromUnits(r.base))}::numeric[],
                           ${batch.map((r) => fromUnits(r.want))}::numeric[]) as r(id, account_id, min, base, want)
    ), locked as (
      select a.id, a.balance_usd - a.reserved_usd as spendable from accounts as a
      where a.id in (select account_id from req) order by a.id for no key update
    ), granted as (
      select r.id, r.account_id, ${leaseAmount(sql`l.spendable`)} as amount from req as r join locked as l on l.id = r.account_id
      where l.spendable >= r.min and r.min > 0
    ), added as (
      update accounts as a set reserved_usd = a.reserved_usd + g.amount from granted as g where a.id = g.account_id returning a.id
    ), upserted as (
      insert into llm_reservations as h (id, account_id, amount_usd, expires_at)
      select id, account_id, amount, now() + ${`${ttlMs} milliseconds`}::interval from granted
      on conflict (id) do update set amount_usd = h.amount_usd + excluded.amount_usd, expires_at = excluded.expires_at
      returning h.id
    )
    select r.id, coalesce((select g.amount from granted as g where g.id = r.id), 0)::text as granted,
           coalesce((select l.spendable from locked as l where l.id = r.account_id), 0)::text as spendable,
           (select count(*) from upserted) as written
    from req as r`.compile(db);
}

/** Pushes the leases' expiry forward; answers the ids still there (a swept lease is gone). */
export async function renewLeases(db: Db, ids: string[], ttlMs: number): Promise<Set<string>> {
  const renewed = await sql<{
    id: string;
  }>`update llm_reservations set expires_at = now() + ${`${ttlMs} milliseconds`}::interval
    where id = any(${ids}::text[]) returning id`.execute(db);
  return new Set(renewed.rows.map((r) => r.id));
}

/**
 * Locks the accounts (id order, so writers never deadlock) and returns what each can still
 * spend: its balance minus its open holds. Every writer of `balance_usd`/`reserved_usd` that
 * decides from them takes this lock first.
 */
export async function lockSpendable(trx: DbOrTrx, accountIds: number[]): Promise<Map<number, bigint>> {
  const ids = [...new Set(accountIds)].sort((a, b) => a - b);
  if (ids.length === 0) return new Map();
  const rows = await trx
    .selectFrom('accounts')
    .select(['id', 'balance_usd', 'reserved_usd'])
    .where('id', 'in', ids)
    .orderBy('id')
    .forNoKeyUpdate()
    .execute();
  return new Map(rows.map((row) => [row.id, toUnits(row.balance_usd) - toUnits(row.reserved_usd)]));
}

/** Deletes lease rows (by id, or every expired one) and takes their amounts off the accounts' reserved totals. */
export async function releaseHolds(trx: DbOrTrx, which: { ids: string[] } | { expired: true }): Promise<void> {
  const found =
    'ids' in which
      ? await trx
          .selectFrom('llm_reservations')
          .select('account_id')
          .distinct()
          .where('id', 'in', which.ids.length ? which.ids : [''])
          .execute()
      : await trx
          .selectFrom('llm_reservations')
          .select('account_id')
          .distinct()
          .where('expires_at', '<', sql<Date>`now()`)
          .limit(1000)
          .execute();
  const accounts = found.map((r) => r.account_id);
  if (accounts.length === 0) return;
  await lockSpendable(trx, accounts);
  const condition =
    'ids' in which
      ? sql`id = any(${which.ids}::text[])`
      : sql`expires_at < now() and account_id = any(${accounts}::int[])`;
  await sql`
    with gone as (delete from llm_reservations where ${condition} returning account_id, amount_usd)
    update accounts as a set reserved_usd = a.reserved_usd - g.total
    from (select account_id, sum(amount_usd) as total from gone group by account_id) as g
    where a.id = g.account_id`.execute(trx);
}

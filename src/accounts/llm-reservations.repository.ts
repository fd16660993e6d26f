import { type CompiledQuery, sql } from 'kysely';
import type { Db, DbOrTrx } from '../db/database.ts';
import type { LeaseGrowth } from './lease-pool.ts';
import { type GrownLease, leaseAmount, leaseGrowthRequests, upsertLeaseRows } from './lease-growth.repository.ts';
import { toUnits } from './money.ts';

/**
 * The `llm_reservations` table: one row per instance lease on an account's balance, its amount
 * counted in `accounts.reserved_usd` (docs/money.md). Every writer of those two columns that decides
 * from them locks the accounts first, in id order, so writers never deadlock.
 */

/**
 * One statement for a batch of lease growths (one lease per account, so no two requests share
 * an account): the accounts are locked in id order and each lease grows by what `leaseAmount`
 * grants, or not at all when the account can spend less than `min`. Compiled, so the caller
 * can run it as a named prepared statement.
 */
export function growLeasesStatement(db: Db, batch: LeaseGrowth[], ttlMs: number): CompiledQuery<GrownLease> {
  return sql`
    with req as (
      ${leaseGrowthRequests(batch, 'account_id')}
    ), locked as (
      select a.id, a.balance_usd - a.reserved_usd as spendable from accounts as a
      where a.id in (select account_id from req) order by a.id for no key update
    ), granted as (
      select r.id, r.account_id, ${leaseAmount(sql`l.spendable`)} as amount from req as r join locked as l on l.id = r.account_id
      where l.spendable >= r.min and r.min > 0
    ), added as (
      update accounts as a set reserved_usd = a.reserved_usd + g.amount from granted as g where a.id = g.account_id returning a.id
    ), upserted as (
      ${upsertLeaseRows('llm_reservations', 'account_id', ttlMs)}
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

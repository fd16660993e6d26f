import { sql } from 'kysely';
import type { Db, DbOrTrx } from '../db/database.ts';
import { fromUnits, toUnits, type UsdUnits } from '../accounts/money.ts';
import { spendNow } from './key-period.repository.ts';

/**
 * Holds on key budgets for LLM calls in flight (docs/keys.md): one `key_holds` row per call,
 * counted in `api_keys.reserved_usd`. The grant is one UPDATE whose condition Postgres
 * re-checks on the row's newest version after waiting for its lock, so concurrent grants on
 * any number of instances never promise more than `budget − spent − held`.
 */

export type KeyHoldResult =
  | { ok: true; id: string | null }
  /** `available`: what the key could still hold (for the message). */
  | { ok: false; available: UsdUnits };

export async function grantKeyHold(db: Db, keyId: number, units: UsdUnits, ttlMs: number): Promise<KeyHoldResult> {
  const id = `keyhold:${crypto.randomUUID()}`;
  const amount = fromUnits(units);
  const result = await sql<{ granted: number; budgeted: boolean; available: string | null }>`
    with granted as (
      update api_keys as k set reserved_usd = k.reserved_usd + ${amount}::numeric
      where k.id = ${keyId} and k.budget_usd is not null
        and k.budget_usd - ${spendNow('k')} - k.reserved_usd >= ${amount}::numeric
      returning k.id
    ), held as (
      insert into key_holds (id, key_id, amount_usd, expires_at)
      select ${id}, g.id, ${amount}::numeric, now() + ${`${ttlMs} milliseconds`}::interval from granted as g
      returning id
    )
    select (select count(*) from held)::int as granted, k.budget_usd is not null as budgeted,
           (k.budget_usd - ${spendNow('k')} - k.reserved_usd)::text as available
    from api_keys as k where k.id = ${keyId}`.execute(db);
  const row = result.rows[0];
  // No budget (any more): nothing to hold.
  if (!row?.budgeted) return { ok: true, id: null };
  if (row.granted > 0) return { ok: true, id };
  const available = row.available === null ? 0n : toUnits(row.available);
  return { ok: false, available: available > 0n ? available : 0n };
}

/** Deletes holds (by id, or up to 1000 expired ones) and takes them off their keys' `reserved_usd`. */
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

export async function renewKeyHolds(db: DbOrTrx, ids: string[], ttlMs: number): Promise<void> {
  if (ids.length === 0) return;
  await sql`update key_holds set expires_at = now() + ${`${ttlMs} milliseconds`}::interval
    where id = any(${ids}::text[])`.execute(db);
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

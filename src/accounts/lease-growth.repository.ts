import { type RawBuilder, sql } from 'kysely';
import type { LeaseGrowth } from './lease-pool.ts';
import { fromUnits } from './money.ts';

/**
 * The pieces both lease growth statements share (accounts: src/accounts/llm-reservations.repository.ts;
 * key budgets: src/keys/key-holds.repository.ts). Each statement locks its owners, decides what
 * each request gets with `leaseAmount`, adds it to the owner's `reserved_usd`, and upserts the
 * lease rows; these build the request rows, the grant and the upsert.
 */

/** What a growth statement answers per request: the lease, what it was granted, and what its owner could spend. */
export interface GrownLease {
  id: string;
  granted: string;
  spendable: string;
}

/** The batch as rows `r(id, <ownerColumn>, min, base, want)`, for the statement's `req` CTE. */
export function leaseGrowthRequests(batch: LeaseGrowth[], ownerColumn: string): RawBuilder<unknown> {
  return sql`select * from unnest(${batch.map((r) => r.leaseId)}::text[], ${batch.map((r) => r.ownerId)}::int[],
      ${batch.map((r) => fromUnits(r.min))}::numeric[], ${batch.map((r) => fromUnits(r.base))}::numeric[],
      ${batch.map((r) => fromUnits(r.want))}::numeric[]) as r(id, ${sql.id(ownerColumn)}, min, base, want)`;
}

/**
 * What a lease growth grants (`r` the request, `spendable` what the owner can still spend): `base`
 * (the call and a few more of its size) and, when the instance asks for more (`want`: its lease ran
 * short often lately), up to `want` but no more than a 32nd of what the owner can spend, so one
 * instance's unused headroom never keeps much from the others and from the owner's media tasks.
 * The headroom past the call itself (`min`) is at most a quarter of what the owner can spend: on
 * a small balance, `base` would be all of it, and every other instance (another worker of the
 * same host) would refuse the owner's calls until this lease sat idle. Never more than
 * `spendable`; the caller grants nothing when `spendable` is below `min`.
 */
export function leaseAmount(spendable: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`least(${spendable}, r.min + least(greatest(r.base, least(r.want, ${spendable} / 32)) - r.min, ${spendable} / 4))`;
}

/** Adds the `granted` CTE's amounts to the lease rows of `table` (created when new), renewing them. */
export function upsertLeaseRows(table: string, ownerColumn: string, ttlMs: number): RawBuilder<unknown> {
  const owner = sql.id(ownerColumn);
  return sql`insert into ${sql.table(table)} as h (id, ${owner}, amount_usd, expires_at)
      select id, ${owner}, amount, now() + ${`${ttlMs} milliseconds`}::interval from granted
      on conflict (id) do update set amount_usd = h.amount_usd + excluded.amount_usd, expires_at = excluded.expires_at
      returning h.id`;
}

import { sql } from 'kysely';
import type { Db, DbOrTrx } from '../db/database.ts';
import type { Logger } from '../ops/logger.ts';
import { errorFields } from '../ops/logger.ts';
import { GroupCommit } from '../ops/group-commit.ts';
import { fromUnits, toUnits } from './money.ts';

/** A hold granted, or refused with what the account could still hold. */
export type HoldResult = { ok: true; id: string } | { ok: false; availableUnits: bigint };

interface HoldRequest {
  id: string;
  accountId: number;
  units: bigint;
}

export interface ReservationOptions {
  /** A hold not renewed for this long is released by the sweeper (its instance died). */
  ttlMs?: number;
  /** How often this instance renews the holds of its calls in flight, and sweeps expired ones. */
  tickMs?: number;
  /** Calls longer than this stop being renewed: a hold that leaked is released at last. */
  maxHoldMs?: number;
}

/**
 * Holds on account balances for LLM calls in flight (docs/money.md): admission reserves the
 * call's worst case atomically against `balance − reserved`, settlement (in the usage recorder)
 * deletes the hold and charges the real cost, so parallel calls can never overdraw.
 *
 * Holds are granted in batches (group commit): the accounts of a batch are locked in id order,
 * each hold granted while the account's spendable amount covers it, and the reserved totals and
 * hold rows written with one statement. The commit is asynchronous (`synchronous_commit = off`):
 * losing a hold in a crash loses its row and its total together, and the settlement that follows
 * it commits synchronously, flushing the log up to and including the hold.
 */
export class BalanceReservations {
  private readonly open = new Map<string, { accountId: number; since: number }>();
  private readonly granting: GroupCommit<HoldRequest, HoldResult>;
  private readonly releasing: GroupCommit<string, void>;
  private timer?: ReturnType<typeof setInterval>;
  private readonly ttlMs: number;
  private readonly tickMs: number;
  private readonly maxHoldMs: number;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    opts: ReservationOptions = {},
  ) {
    this.ttlMs = opts.ttlMs ?? 5 * 60_000;
    this.tickMs = opts.tickMs ?? 30_000;
    this.maxHoldMs = opts.maxHoldMs ?? 2 * 3600_000;
    this.granting = new GroupCommit((batch) => this.grant(batch), { name: 'reservation grant', log });
    this.releasing = new GroupCommit(
      async (ids) => {
        await this.db.transaction().execute((trx) => releaseHolds(trx, { ids }));
        return ids.map(() => undefined);
      },
      { name: 'reservation release', log },
    );
  }

  /** Reserves `units` (1e-10 USD) of the account's spendable balance for one call. */
  async reserve(accountId: number, units: bigint): Promise<HoldResult> {
    const id = crypto.randomUUID();
    const result = await this.granting.submit({ id, accountId, units });
    if (result.ok) this.open.set(id, { accountId, since: Date.now() });
    return result;
  }

  /** The call ended without a settlement (refused, failed before any usage): the hold goes. */
  release(id: string): void {
    this.open.delete(id);
    void this.releasing.submit(id).catch(() => undefined);
  }

  /** The usage recorder settled the hold (deleted its row) in its own transaction. */
  settled(id: string): void {
    this.open.delete(id);
  }

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.tickMs);
    this.timer.unref?.();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.releasing.drain();
  }

  /** Renews this instance's holds, then releases any instance's expired ones. */
  async tick(): Promise<void> {
    try {
      const now = Date.now();
      const live: string[] = [];
      for (const [id, hold] of this.open) {
        if (now - hold.since > this.maxHoldMs) this.open.delete(id);
        else live.push(id);
      }
      if (live.length) {
        await sql`update llm_reservations set expires_at = now() + ${`${this.ttlMs} milliseconds`}::interval where id = any(${live}::text[])`.execute(this.db);
      }
      await this.db.transaction().execute((trx) => releaseHolds(trx, { expired: true }));
    } catch (err) {
      this.log.error('reservation renew/sweep failed', errorFields(err));
    }
  }

  private async grant(batch: HoldRequest[]): Promise<HoldResult[]> {
    return this.db.transaction().execute(async (trx) => {
      await sql`set local synchronous_commit = off`.execute(trx);
      const spendable = await lockSpendable(trx, batch.map((h) => h.accountId));
      const results: HoldResult[] = [];
      const granted: HoldRequest[] = [];
      const reservedAdded = new Map<number, bigint>();
      for (const hold of batch) {
        const available = spendable.get(hold.accountId) ?? 0n;
        if (available < hold.units) {
          results.push({ ok: false, availableUnits: available > 0n ? available : 0n });
          continue;
        }
        spendable.set(hold.accountId, available - hold.units);
        reservedAdded.set(hold.accountId, (reservedAdded.get(hold.accountId) ?? 0n) + hold.units);
        granted.push(hold);
        results.push({ ok: true, id: hold.id });
      }
      if (granted.length === 0) return results;
      const accounts = [...reservedAdded.keys()];
      await sql`
        with added as (
          update accounts as a set reserved_usd = a.reserved_usd + v.amount
          from unnest(${accounts}::int[], ${accounts.map((id) => fromUnits(reservedAdded.get(id) ?? 0n))}::numeric[]) as v(id, amount)
          where a.id = v.id
          returning a.id
        )
        insert into llm_reservations (id, account_id, amount_usd, expires_at)
        select id, account_id, amount, now() + ${`${this.ttlMs} milliseconds`}::interval
        from unnest(${granted.map((h) => h.id)}::text[], ${granted.map((h) => h.accountId)}::int[], ${granted.map((h) => fromUnits(h.units))}::numeric[])
          as r(id, account_id, amount)`.execute(trx);
      return results;
    });
  }
}

/**
 * Locks the accounts (id order, so writers never deadlock) and returns what each can still
 * spend: its balance minus its open holds. Every writer of `balance_usd`/`reserved_usd` that
 * decides from them takes this lock first.
 */
export async function lockSpendable(trx: DbOrTrx, accountIds: number[]): Promise<Map<number, bigint>> {
  const ids = [...new Set(accountIds)].sort((a, b) => a - b);
  if (ids.length === 0) return new Map();
  const rows = await trx.selectFrom('accounts').select(['id', 'balance_usd', 'reserved_usd']).where('id', 'in', ids).orderBy('id').forNoKeyUpdate().execute();
  return new Map(rows.map((row) => [row.id, toUnits(row.balance_usd) - toUnits(row.reserved_usd)]));
}

/** Deletes holds (by id, or every expired one) and takes their amounts off the accounts' reserved totals. */
async function releaseHolds(trx: DbOrTrx, which: { ids: string[] } | { expired: true }): Promise<void> {
  const found =
    'ids' in which
      ? await trx.selectFrom('llm_reservations').select('account_id').distinct().where('id', 'in', which.ids.length ? which.ids : ['']).execute()
      : await trx.selectFrom('llm_reservations').select('account_id').distinct().where('expires_at', '<', sql<Date>`now()`).limit(1000).execute();
  const accounts = found.map((r) => r.account_id);
  if (accounts.length === 0) return;
  await lockSpendable(trx, accounts);
  const condition = 'ids' in which ? sql`id = any(${which.ids}::text[])` : sql`expires_at < now() and account_id = any(${accounts}::int[])`;
  await sql`
    with gone as (delete from llm_reservations where ${condition} returning account_id, amount_usd)
    update accounts as a set reserved_usd = a.reserved_usd - g.total
    from (select account_id, sum(amount_usd) as total from gone group by account_id) as g
    where a.id = g.account_id`.execute(trx);
}

/** Deletes settled holds inside the settlement's transaction (accounts already locked); amount per hold id. */
export async function takeHolds(trx: DbOrTrx, ids: string[]): Promise<Map<string, bigint>> {
  if (ids.length === 0) return new Map();
  const rows = await sql<{ id: string; amount_usd: string }>`delete from llm_reservations where id = any(${ids}::text[]) returning id, amount_usd`.execute(trx);
  return new Map(rows.rows.map((r) => [r.id, toUnits(r.amount_usd)]));
}

import { sql } from 'kysely';
import type { Db, DbOrTrx } from '../db/database.ts';
import type { Logger } from '../ops/logger.ts';
import { errorFields } from '../ops/logger.ts';
import { GroupCommit } from '../ops/group-commit.ts';
import { runUnprepared, type RunPrepared } from '../db/prepared.ts';
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
 * Holds are granted in batches (group commit), one statement per batch.
 */
export class BalanceReservations {
  private readonly open = new Map<string, { accountId: number; since: number }>();
  private readonly granting: GroupCommit<HoldRequest, HoldResult>;
  private readonly releasing: GroupCommit<string, void>;
  private timer?: ReturnType<typeof setInterval>;
  private readonly ttlMs: number;
  private readonly tickMs: number;
  private readonly maxHoldMs: number;

  private readonly prepared: RunPrepared;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    opts: ReservationOptions = {},
    prepared?: RunPrepared,
  ) {
    this.prepared = prepared ?? runUnprepared(db);
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

  /**
   * One statement for the whole batch (one round trip): the accounts are locked in id order, the
   * holds granted in submission order while their running total per account fits its spendable
   * amount (a refused hold also refuses the later ones of its account in the same batch), and
   * the reserved totals and hold rows written.
   */
  private async grant(batch: HoldRequest[]): Promise<HoldResult[]> {
    const query = sql`
      with req as (
        select * from unnest(${batch.map((h) => h.id)}::text[], ${batch.map((h) => h.accountId)}::int[],
                             ${batch.map((h) => fromUnits(h.units))}::numeric[], ${batch.map((_, i) => i)}::int[]) as r(id, account_id, amount, ord)
      ), locked as (
        select a.id, a.balance_usd - a.reserved_usd as spendable from accounts as a
        where a.id in (select account_id from req) order by a.id for no key update
      ), running as (
        select r.*, sum(r.amount) over (partition by r.account_id order by r.ord) as total from req as r
      ), granted as (
        select g.id, g.account_id, g.amount from running as g join locked as l on l.id = g.account_id where g.total <= l.spendable
      ), added as (
        update accounts as a set reserved_usd = a.reserved_usd + s.amount
        from (select account_id, sum(amount) as amount from granted group by account_id) as s
        where a.id = s.account_id
        returning a.id
      ), inserted as (
        insert into llm_reservations (id, account_id, amount_usd, expires_at)
        select id, account_id, amount, now() + ${`${this.ttlMs} milliseconds`}::interval from granted
        returning id
      )
      select (select array_agg(id) from inserted) as granted, (select json_agg(json_build_object('id', id, 'spendable', spendable::text)) from locked) as accounts`;
    const rows = await this.prepared<{ granted: string[] | null; accounts: Array<{ id: number; spendable: string }> | null }>('grant_llm_holds', query.compile(this.db));
    const granted = new Set(rows[0]?.granted ?? []);
    const left = new Map((rows[0]?.accounts ?? []).map((a) => [a.id, toUnits(a.spendable)]));
    for (const hold of batch) if (granted.has(hold.id)) left.set(hold.accountId, (left.get(hold.accountId) ?? 0n) - hold.units);
    return batch.map((hold) => {
      if (granted.has(hold.id)) return { ok: true, id: hold.id };
      const available = left.get(hold.accountId) ?? 0n;
      return { ok: false, availableUnits: available > 0n ? available : 0n };
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

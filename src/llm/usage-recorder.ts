import { sql } from 'kysely';
import type { AccountCache } from '../accounts/account-cache.ts';
import type { BalanceReservations } from '../accounts/balance-reservations.ts';
import { fromUnits, toUnits } from '../accounts/money.ts';
import type { Db } from '../db/database.ts';
import { runUnprepared, type RunPrepared } from '../db/prepared.ts';
import { GroupCommit } from '../ops/group-commit.ts';
import type { Logger } from '../ops/logger.ts';
import { errorFields } from '../ops/logger.ts';
import { isPoisonError } from '../db/db-errors.ts';

/** One finished LLM call: becomes a task row (`category: llm`) and, when it cost anything, a ledger charge. */
export interface LlmCallRecord {
  taskId: string;
  accountId: number;
  model: string;
  provider: string;
  status: 'completed' | 'failed';
  /** Already storable (see `toStorable`): the recorder writes it as it is. */
  input: unknown;
  output: unknown;
  errorMessage?: string;
  costUsd: number;
  createdAt: Date;
  /** The hold taken at admission, settled (deleted) in the same transaction as the charge. */
  reservationId?: string;
}

/**
 * Writes LLM call records by group commit and settles their holds: `record()` resolves once the
 * call's task row, charge and ledger entry are durably committed, so a caller that waits for it
 * before sending the last byte never answers a call that a crash could leave unbilled.
 *
 * Per batch, one statement: the accounts are locked, the holds deleted, each call charged its
 * cost — never more than the account can spend besides the other open holds, so the balance never
 * goes below zero — and tasks, balances and ledger rows written.
 *
 * Failures are isolated: a batch that fails for its data is written record by record, and a
 * record that still fails is set aside in `dead_letters` (its hold is then released); a batch
 * that fails for the database's sake (connection lost) is retried with backoff, never dropped.
 */
export class UsageRecorder {
  private readonly commit: GroupCommit<LlmCallRecord, void>;
  private stopping = false;
  private readonly prepared: RunPrepared;

  constructor(
    private readonly db: Db,
    private readonly accounts: AccountCache,
    private readonly reservations: BalanceReservations,
    private readonly log: Logger,
    maxBatch = 500,
    prepared?: RunPrepared,
  ) {
    this.prepared = prepared ?? runUnprepared(db);
    this.commit = new GroupCommit((batch) => this.writeDurably(batch), { name: 'llm usage write', log, maxBatch });
  }

  /** Resolves when the record is committed (or, if it can never be, set aside); never rejects. */
  record(rec: LlmCallRecord): Promise<void> {
    return this.commit.submit(rec).catch(() => this.deadLetter(rec, 'write failed'));
  }

  /** Retries a batch whose failure is the database's, not the data's, until it lands. */
  private async writeDurably(batch: LlmCallRecord[]): Promise<void[]> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.write(batch);
        return batch.map(() => undefined);
      } catch (err) {
        if (isPoisonError(err)) {
          if (batch.length > 1) throw err; // GroupCommit writes the records one by one
          await this.deadLetter(batch[0] as LlmCallRecord, err);
          return [undefined];
        }
        // Committed or not, we cannot tell: the leases of these accounts may be stale.
        this.reservations.retire(batch.map((r) => r.accountId));
        if (this.stopping && attempt >= 5) throw err;
        this.log.error('llm usage write failed; will retry', { records: batch.length, attempt, ...errorFields(err) });
        await Bun.sleep(Math.min(5_000, 100 * 2 ** attempt));
      }
    }
  }

  private async write(batch: LlmCallRecord[]): Promise<void> {
    const charged = await settleBatch(this.db, this.prepared, this.reservations, batch);
    this.reservations.settled(batch.flatMap((r) => (r.reservationId ? [r.reservationId] : [])), charged.taken);
    for (const [id, shortfall] of charged.shortfalls) this.log.warn('llm call cost more than the account could spend; charged what was left', { account_id: id, shortfall_usd: fromUnits(shortfall) });
    for (const id of charged.accounts) void this.accounts.changed(id);
  }

  /** Keeps a record that cannot be written, as escaped JSON text, and frees its hold. */
  private async deadLetter(rec: LlmCallRecord, reason: unknown): Promise<void> {
    let payload: string;
    try {
      payload = JSON.stringify(rec);
    } catch {
      payload = JSON.stringify({ taskId: rec.taskId, accountId: rec.accountId, model: rec.model, costUsd: rec.costUsd });
    }
    const error = reason instanceof Error ? reason.message : String(reason);
    this.log.error('llm usage record set aside in dead_letters', { task_id: rec.taskId, account_id: rec.accountId, error });
    try {
      await this.db.insertInto('dead_letters').values({ kind: 'llm_usage', payload, error: JSON.stringify(error).slice(1, -1) }).execute();
    } catch (err) {
      this.log.error('dead letter write failed', { task_id: rec.taskId, payload, ...errorFields(err) });
    }
    if (rec.reservationId) this.reservations.release(rec.reservationId);
  }

  /** Writes everything queued (shutdown). */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.commit.drain();
  }
}

/**
 * The batch's settlement as one statement (one round trip, one commit): the accounts are locked
 * in id order, the calls' holds deleted, and each call charged its cost — capped, per account,
 * at what the account can spend plus the holds this batch releases, so the balance never goes
 * below zero and other calls' holds are never eaten into. Only calls whose task row is new are
 * charged, so a batch retried after a commit we did not hear about is never charged twice.
 * Returns the accounts whose money moved and the shortfall of any account charged less than cost.
 */
async function settleBatch(db: Db, prepared: RunPrepared, reservations: BalanceReservations, batch: LlmCallRecord[]): Promise<{ accounts: number[]; shortfalls: Map<number, bigint>; taken: Map<string, bigint> }> {
  const finishedAt = new Date().toISOString();
  // The rows travel as one JSON document: one JSON.stringify for the batch, no per-element
  // escaping of a jsonb[] array literal by the driver (the inputs are the bulk of the bytes).
  const rows = batch.map((r, i) => {
    const hold = r.reservationId ? reservations.holdOf(r.reservationId) : undefined;
    return {
    ord: i,
    id: r.taskId,
    account_id: r.accountId,
    model: r.model,
    provider: r.provider,
    status: r.status,
    input: r.input,
    output: r.output,
    error_message: r.errorMessage ?? null,
    cost: fromUnits(toUnits(r.costUsd)),
    created_at: r.createdAt.toISOString(),
    hold_id: hold?.leaseId ?? null,
    hold_units: hold ? fromUnits(hold.units) : null,
    };
  });
  const query = sql`
    with rec as (
      select * from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
        as t(ord int, id text, account_id int, model text, provider text, status text, input jsonb, output jsonb,
             error_message text, cost numeric, created_at timestamptz, hold_id text, hold_units numeric)
    ), locked as (
      select a.id, a.balance_usd - a.reserved_usd as spendable from accounts as a
      where a.id in (select account_id from rec) order by a.id for no key update
    ), fresh as (
      select r.* from rec as r where not exists (select 1 from tasks as t where t.id = r.id)
    ), lease_take as (
      -- Read once the accounts are locked (every writer of a lease row holds its account's lock).
      select h.id, h.account_id, least(h.amount_usd, s.want) as take
      from llm_reservations as h
      join (select hold_id, sum(least(cost, hold_units)) as want from fresh where hold_id is not null group by hold_id) as s on s.hold_id = h.id
      where exists (select 1 from locked)
    ), budget as (
      select l.id, coalesce((select sum(t.take) from lease_take as t where t.account_id = l.id), 0) as from_lease,
             greatest(l.spendable, 0) as spendable
      from locked as l
    ), running as (
      select f.*, b.from_lease + b.spendable as cap, sum(f.cost) over (partition by f.account_id order by f.ord) as upto
      from fresh as f join budget as b on b.id = f.account_id
    ), charged as (
      select r.*, greatest(least(r.upto, r.cap), 0) - greatest(least(r.upto - r.cost, r.cap), 0) as charge from running as r
    ), cumulative as (
      select c.*, sum(c.charge) over (partition by c.account_id order by c.ord) as charged_upto from charged as c
    ), created as (
      insert into tasks (id, account_id, model, provider, category, status, input, output, error_message, cost_usd, created_at, finished_at)
      select id, account_id, model, provider, 'llm', status, input, output, error_message, charge, created_at, ${finishedAt}::timestamptz
      from charged on conflict (id) do nothing
      returning id
    ), totals as (
      select b.id, b.from_lease, coalesce(sum(c.charge), 0) as charged, coalesce(sum(c.cost), 0) as cost
      from budget as b left join charged as c on c.account_id = b.id group by b.id, b.from_lease
    ), taken as (
      update llm_reservations as h set amount_usd = h.amount_usd - t.take from lease_take as t where h.id = t.id and t.take > 0
      returning h.id, t.take
    ), moved as (
      update accounts as a set balance_usd = a.balance_usd - t.charged, reserved_usd = a.reserved_usd - t.from_lease, updated_at = now()
      from totals as t where a.id = t.id and (t.charged > 0 or t.from_lease > 0)
      returning a.id, a.balance_usd, t.charged, t.cost
    ), ledger as (
      insert into ledger_entries (account_id, amount_usd, balance_after_usd, kind, task_id, category, note)
      select c.account_id, -c.charge, m.balance_usd + m.charged - c.charged_upto, 'charge', c.id, 'llm', c.model
      from cumulative as c join moved as m on m.id = c.account_id where c.charge > 0
    )
    select 'account' as kind, id::text as id, cost::text as cost, charged::text as charged from moved
    union all
    select 'lease', id, take::text, null from taken`;
  const result = await prepared<{ kind: 'account' | 'lease'; id: string; cost: string; charged: string | null }>('settle_llm_calls', query.compile(db));
  const moved = result.filter((r) => r.kind === 'account').map((r) => ({ id: Number(r.id), cost: r.cost, charged: r.charged ?? '0' }));
  const taken = new Map(result.filter((r) => r.kind === 'lease').map((r) => [r.id, toUnits(r.cost)]));
  const shortfalls = new Map<number, bigint>();
  for (const m of moved) if (toUnits(m.cost) > toUnits(m.charged)) shortfalls.set(m.id, toUnits(m.cost) - toUnits(m.charged));
  return { accounts: moved.filter((m) => toUnits(m.charged) > 0n).map((m) => m.id), shortfalls, taken };
}

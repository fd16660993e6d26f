import { sql } from 'kysely';
import type { AccountCache } from '../accounts/account-cache.ts';
import { lockSpendable, takeHolds, type BalanceReservations } from '../accounts/balance-reservations.ts';
import { fromUnits, toUnits } from '../accounts/money.ts';
import type { Db, DbOrTrx } from '../db/database.ts';
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
 * Per batch, one transaction: the accounts are locked, the holds deleted, each call charged its
 * cost — never more than the account can spend besides the other open holds, so the balance never
 * goes below zero — and tasks, balances and ledger rows written with one statement each.
 *
 * Failures are isolated: a batch that fails for its data is written record by record, and a
 * record that still fails is set aside in `dead_letters` (its hold is then released); a batch
 * that fails for the database's sake (connection lost) is retried with backoff, never dropped.
 */
export class UsageRecorder {
  private readonly commit: GroupCommit<LlmCallRecord, void>;
  private stopping = false;

  constructor(
    private readonly db: Db,
    private readonly accounts: AccountCache,
    private readonly reservations: BalanceReservations,
    private readonly log: Logger,
    maxBatch = 500,
  ) {
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
        await this.write(batch, attempt > 1);
        return batch.map(() => undefined);
      } catch (err) {
        if (isPoisonError(err)) {
          if (batch.length > 1) throw err; // GroupCommit writes the records one by one
          await this.deadLetter(batch[0] as LlmCallRecord, err);
          return [undefined];
        }
        if (this.stopping && attempt >= 5) throw err;
        this.log.error('llm usage write failed; will retry', { records: batch.length, attempt, ...errorFields(err) });
        await Bun.sleep(Math.min(5_000, 100 * 2 ** attempt));
      }
    }
  }

  private async write(batch: LlmCallRecord[], retry: boolean): Promise<void> {
    const charged = await this.db.transaction().execute((trx) => settleBatch(trx, batch, retry));
    for (const rec of batch) if (rec.reservationId) this.reservations.settled(rec.reservationId);
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
 * The batch's charges, inside the caller's transaction. Returns the accounts whose balance
 * changed, and the shortfall of any call whose cost exceeded what its account could spend.
 */
async function settleBatch(trx: DbOrTrx, all: LlmCallRecord[], retry: boolean): Promise<{ accounts: number[]; shortfalls: Map<number, bigint> }> {
  let batch = all;
  if (retry) {
    // The last attempt may have committed without our hearing it: never charge a call twice.
    const done = new Set((await trx.selectFrom('tasks').select('id').where('id', 'in', all.map((r) => r.taskId)).execute()).map((r) => r.id));
    batch = all.filter((r) => !done.has(r.taskId));
    if (batch.length === 0) return { accounts: [], shortfalls: new Map() };
  }
  const spendable = await lockSpendable(trx, batch.map((r) => r.accountId));
  const holds = await takeHolds(trx, batch.flatMap((r) => (r.reservationId ? [r.reservationId] : [])));
  const released = new Map<number, bigint>();
  const charges = new Map<number, bigint>();
  const shortfalls = new Map<number, bigint>();
  const costs: string[] = [];
  const ledger: Array<{ rec: LlmCallRecord; units: bigint; cumulative: bigint }> = [];
  for (const rec of batch) {
    const held = (rec.reservationId && holds.get(rec.reservationId)) || 0n;
    released.set(rec.accountId, (released.get(rec.accountId) ?? 0n) + held);
    // The call's own hold is spendable by it; other open holds are not.
    const available = (spendable.get(rec.accountId) ?? 0n) + held;
    const cost = toUnits(rec.costUsd);
    const units = cost <= available ? cost : available > 0n ? available : 0n;
    if (units < cost) shortfalls.set(rec.accountId, (shortfalls.get(rec.accountId) ?? 0n) + cost - units);
    spendable.set(rec.accountId, available - units);
    costs.push(fromUnits(units));
    if (units > 0n) {
      const cumulative = (charges.get(rec.accountId) ?? 0n) + units;
      charges.set(rec.accountId, cumulative);
      ledger.push({ rec, units, cumulative });
    }
  }
  const finishedAt = new Date().toISOString();
  // The rows travel as one JSON document: one JSON.stringify for the batch, no per-element
  // escaping of a jsonb[] array literal by the driver (the inputs are the bulk of the bytes).
  const rows = batch.map((r, i) => ({
    id: r.taskId,
    account_id: r.accountId,
    model: r.model,
    provider: r.provider,
    status: r.status,
    input: r.input,
    output: r.output,
    error_message: r.errorMessage ?? null,
    cost_usd: costs[i],
    created_at: r.createdAt.toISOString(),
  }));
  const accounts = [...new Set([...charges.keys(), ...[...released].filter(([, u]) => u > 0n).map(([id]) => id)])];
  // Each ledger row's balance after it: the new balance plus what the batch charged the account after that row.
  await sql`
    with created as (
      insert into tasks (id, account_id, model, provider, category, status, input, output, error_message, cost_usd, created_at, finished_at)
      select id, account_id, model, provider, 'llm', status, input, output, error_message, cost_usd, created_at, ${finishedAt}::timestamptz
      from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
        as t(id text, account_id int, model text, provider text, status text, input jsonb, output jsonb, error_message text, cost_usd numeric, created_at timestamptz)
      on conflict (id) do nothing
      returning id
    ), moved as (
      update accounts as a set balance_usd = a.balance_usd - v.charged, reserved_usd = a.reserved_usd - v.released, updated_at = now()
      from unnest(${accounts}::int[], ${accounts.map((id) => fromUnits(charges.get(id) ?? 0n))}::numeric[],
                  ${accounts.map((id) => fromUnits(released.get(id) ?? 0n))}::numeric[]) as v(id, charged, released)
      where a.id = v.id
      returning a.id, a.balance_usd, v.charged
    )
    insert into ledger_entries (account_id, amount_usd, balance_after_usd, kind, task_id, category, note)
    select l.account_id, -l.amount, m.balance_usd + m.charged - l.cumulative, 'charge', l.task_id, 'llm', l.note
    from unnest(${ledger.map((l) => l.rec.accountId)}::int[], ${ledger.map((l) => fromUnits(l.units))}::numeric[],
                ${ledger.map((l) => fromUnits(l.cumulative))}::numeric[], ${ledger.map((l) => l.rec.taskId)}::text[], ${ledger.map((l) => l.rec.model)}::text[])
      as l(account_id, amount, cumulative, task_id, note)
    join moved as m on m.id = l.account_id`.execute(trx);
  return { accounts: [...charges.keys()], shortfalls };
}

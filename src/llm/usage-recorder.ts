import type { AccountCache } from '../accounts/account-cache.ts';
import type { BalanceReservations } from '../accounts/balance-reservations.ts';
import type { LeasePool } from '../accounts/lease-pool.ts';
import { fromUnits, toUnits } from '../accounts/money.ts';
import type { Db } from '../db/database.ts';
import { runUnprepared, type RunPrepared } from '../db/prepared.ts';
import { GroupCommit } from '../ops/group-commit.ts';
import type { Logger } from '../ops/logger.ts';
import { errorFields } from '../ops/logger.ts';
import { isPoisonError, pauseBeforeRetry } from '../db/db-errors.ts';
import { setAside } from '../ops/dead-letters.repository.ts';
import { type SettledBatch, type SettlementRow, settleLlmCalls } from './llm-settlement.repository.ts';
import type { SettlementJournal } from './settlement-journal.ts';
import { SettledWaits } from './settled-waits.ts';

/**
 * How long the database settlement of journaled calls waits to gather more (bench/README.md:
 * at a quarter and half of saturation, added p50 −0.3 ms and the gateway's CPU per call −0.05 ms
 * against starting a statement at once).
 */
const JOURNALED_LINGER_MS = 10;

/**
 * One finished LLM (or embeddings) call: becomes a task row of its category (`llm` unless said)
 * and, when it cost anything, a ledger charge of the same category.
 */
export interface LlmCallRecord {
  taskId: string;
  accountId: number;
  model: string;
  provider: string;
  category?: 'llm' | 'embedding';
  status: 'completed' | 'failed';
  /** Already storable (see `toStorable`): the recorder writes it as it is. */
  input: unknown;
  output: unknown;
  errorMessage?: string;
  costUsd: number;
  createdAt: Date;
  /** The hold taken at admission, settled (deleted) in the same transaction as the charge. */
  reservationId?: string;
  /** The call's `x-request-id`. */
  requestId?: string;
  /** The API key that made the call; its spend grows by the charge in the same statement. */
  keyId?: number;
  /** The call's hold on its key's budget (src/keys/key-budgets.ts), settled with the charge. */
  keyHoldId?: string;
}

/**
 * Journaled calls waiting for their database settlement, past which calls wait for the database
 * themselves. About 1.7 KB each: a database stalled under 3,500 calls a second held 20,000 in
 * 33 MB, and nothing else bounded them.
 */
export const MAX_UNSETTLED = 20_000;

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
  /** With a journal: the appends that calls wait for, before their database settlement. */
  private readonly journaled?: GroupCommit<LlmCallRecord, void>;
  /** Calls journaled and answered, not yet settled in the database, by account. */
  readonly unsettled = new SettledWaits();
  private journalBroken = false;
  /**
   * A record was neither settled nor set aside (the dead letter's own write failed): the journal,
   * which may hold it, is then never emptied by this process, and the next one replays it.
   */
  private lostRecord = false;
  private stopping = false;
  private readonly prepared: RunPrepared;

  constructor(
    private readonly db: Db,
    private readonly accounts: AccountCache,
    private readonly reservations: BalanceReservations,
    private readonly log: Logger,
    maxBatch = 500,
    prepared?: RunPrepared,
    /** Where budgeted keys' holds come from (src/keys/key-budgets.ts); settled with the charge. */
    private readonly keyBudgets?: LeasePool,
    /**
     * When set (`SETTLEMENT_JOURNAL`), `record` resolves once the call's settlement row is on
     * local disk, and the database settlement follows after the answer (docs/money.md).
     */
    private readonly journal?: SettlementJournal,
    /** Journaled calls waiting for the database past which calls wait for it themselves. */
    private readonly maxUnsettled = MAX_UNSETTLED,
  ) {
    this.prepared = prepared ?? runUnprepared(db);
    this.commit = new GroupCommit((batch) => this.writeDurably(batch), {
      name: 'llm usage write',
      log,
      maxBatch,
      // Nobody waits for it once the journal has the call: gather 10 ms of calls per statement.
      lingerMs: journal ? JOURNALED_LINGER_MS : 0,
    });
    if (journal)
      this.journaled = new GroupCommit((batch) => this.journalBatch(batch, journal), {
        name: 'settlement journal append',
        log,
        maxBatch,
      });
  }

  /**
   * Resolves when the record is durable — committed in the database, or with a journal, on local
   * disk — or, if it can never be written, set aside; never rejects.
   */
  record(rec: LlmCallRecord): Promise<void> {
    // Past `maxUnsettled` calls the database is behind: a call then waits for it as without a
    // journal, so a stall slows the answers instead of growing this process's memory (each
    // waiting settlement holds its record) for as long as the stall lasts.
    if (this.journaled && !this.journalBroken && this.unsettled.total < this.maxUnsettled)
      return this.journaled.submit(rec).catch(() => this.settleNow(rec));
    return this.settleNow(rec);
  }

  private settleNow(rec: LlmCallRecord): Promise<void> {
    return this.commit.submit(rec).catch(() => this.deadLetter(rec, 'write failed'));
  }

  /**
   * One durable append for the batch, then each call's database settlement, not awaited: the
   * calls are answered now. A failed append (disk full, I/O error) turns the journal off for
   * this process: its calls, and every later one, wait for the database as without a journal.
   */
  private async journalBatch(batch: LlmCallRecord[], journal: SettlementJournal): Promise<undefined[]> {
    if (this.journalBroken) throw new Error('settlement journal off after a failed append');
    // Encoded before the write: a record JSON cannot hold fails its batch (split by GroupCommit;
    // the record then takes the database path and its dead letter), not the journal.
    const rowsJson = JSON.stringify(settlementRows(this.reservations, this.keyBudgets, batch));
    let segment: number;
    try {
      segment = await journal.append(new Date().toISOString(), rowsJson, batch.length);
    } catch (err) {
      this.journalBroken = true;
      this.commit.stopLingering();
      this.log.error('settlement journal append failed; calls now wait for the database', {
        path: journal.path,
        ...errorFields(err),
      });
      throw err;
    }
    for (const rec of batch) {
      const settled = this.settleNow(rec);
      this.unsettled.track(rec.accountId, settled);
      settled.then(() => journal.settled(segment));
    }
    return batch.map(() => undefined);
  }

  /** Retries a batch whose failure is the database's, not the data's, until it lands. */
  private async writeDurably(batch: LlmCallRecord[]): Promise<undefined[]> {
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
        // Committed or not, we cannot tell: the leases of these accounts and keys may be stale.
        this.reservations.retire(batch.map((r) => r.accountId));
        this.keyBudgets?.retire(batch.flatMap((r) => (r.keyHoldId && r.keyId !== undefined ? [r.keyId] : [])));
        if (this.stopping && attempt >= 5) throw err;
        this.log.error('llm usage write failed; will retry', { records: batch.length, attempt, ...errorFields(err) });
        await pauseBeforeRetry(attempt);
      }
    }
  }

  private async write(batch: LlmCallRecord[]): Promise<void> {
    const charged = await settleBatch(this.db, this.prepared, this.reservations, this.keyBudgets, batch);
    this.reservations.settled(
      batch.flatMap((r) => (r.reservationId ? [r.reservationId] : [])),
      charged.taken,
    );
    this.keyBudgets?.settled(
      batch.flatMap((r) => (r.keyHoldId ? [r.keyHoldId] : [])),
      charged.keyTaken,
    );
    for (const [id, shortfall] of charged.shortfalls)
      this.log.warn('llm call cost more than the account could spend; charged what was left', {
        account_id: id,
        shortfall_usd: fromUnits(shortfall),
      });
    this.accounts.changedSoon(charged.accounts);
  }

  /** Keeps a record that cannot be written, as escaped JSON text, and frees its hold. */
  private async deadLetter(rec: LlmCallRecord, reason: unknown): Promise<void> {
    let payload: string;
    try {
      payload = JSON.stringify(rec);
    } catch {
      payload = JSON.stringify({
        taskId: rec.taskId,
        accountId: rec.accountId,
        model: rec.model,
        costUsd: rec.costUsd,
      });
    }
    const error = reason instanceof Error ? reason.message : String(reason);
    this.log.error('llm usage record set aside in dead_letters', {
      task_id: rec.taskId,
      account_id: rec.accountId,
      error,
    });
    try {
      await setAside(this.db, 'llm_usage', payload, error);
    } catch (err) {
      this.lostRecord = true;
      // The journal may hold the only copy now: it is never reused or emptied by this process.
      this.journal?.keepAll();
      this.log.error('dead letter write failed', { task_id: rec.taskId, payload, ...errorFields(err) });
    }
    if (rec.reservationId) this.reservations.release(rec.reservationId);
    if (rec.keyHoldId) this.keyBudgets?.release(rec.keyHoldId);
  }

  /** Whether calls are answered from the journal now (false without one, or after a failed append). */
  get journaling(): boolean {
    return this.journaled !== undefined && !this.journalBroken;
  }

  /** Writes everything queued (shutdown); with a journal, empties it once all is settled. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.journaled?.drain();
    await this.commit.drain();
    await this.unsettled.none();
    // Emptied only when every line is in the database or dead_letters; a kept file is replayed.
    this.journal?.close(!this.journalBroken && !this.lostRecord);
  }
}

/** The batch's rows for the settlement statement, each with the hold its call was admitted under. */
function settleBatch(
  db: Db,
  prepared: RunPrepared,
  reservations: BalanceReservations,
  keyBudgets: LeasePool | undefined,
  batch: LlmCallRecord[],
): Promise<SettledBatch> {
  return settleLlmCalls(db, prepared, settlementRows(reservations, keyBudgets, batch));
}

function settlementRows(
  reservations: BalanceReservations,
  keyBudgets: LeasePool | undefined,
  batch: LlmCallRecord[],
): SettlementRow[] {
  return batch.map((r, i) => {
    const hold = r.reservationId ? reservations.holdOf(r.reservationId) : undefined;
    const keyHold = r.keyHoldId ? keyBudgets?.holdOf(r.keyHoldId) : undefined;
    return {
      ord: i,
      id: r.taskId,
      account_id: r.accountId,
      model: r.model,
      provider: r.provider,
      category: r.category ?? 'llm',
      status: r.status,
      input: r.input,
      output: r.output,
      error_message: r.errorMessage ?? null,
      cost: fromUnits(toUnits(r.costUsd)),
      created_at: r.createdAt.toISOString(),
      hold_id: hold?.leaseId ?? null,
      hold_units: hold ? fromUnits(hold.units) : null,
      request_id: r.requestId ?? null,
      key_id: r.keyId ?? null,
      key_hold_id: keyHold?.leaseId ?? null,
      key_hold_units: keyHold ? fromUnits(keyHold.units) : null,
    };
  });
}

import { sql } from 'kysely';
import type { AccountCache } from '../accounts/account-cache.ts';
import { fromUnits, toUnits, toUsdString } from '../accounts/money.ts';
import type { Db } from '../db/database.ts';
import type { Logger } from '../ops/logger.ts';
import { errorFields } from '../ops/logger.ts';

/** One finished LLM call: becomes a task row (`category: llm`) and, when it cost anything, a ledger charge. */
export interface LlmCallRecord {
  taskId: string;
  accountId: number;
  model: string;
  provider: string;
  status: 'completed' | 'failed';
  input: unknown;
  output: unknown;
  errorMessage?: string;
  costUsd: number;
  createdAt: Date;
}

/**
 * Writes LLM call records off the request path: records queue in memory and are written every
 * `flushMs` (or every `maxBatch` records) in one transaction — one multi-row task insert, one
 * balance update per account, one multi-row ledger insert. A failed write keeps the records and
 * retries; `stop()` drains the queue on shutdown. The window a crash can lose is `flushMs`.
 */
export class UsageRecorder {
  private queue: LlmCallRecord[] = [];
  private timer?: ReturnType<typeof setTimeout>;
  private flushing?: Promise<void>;
  private failures = 0;

  constructor(
    private readonly db: Db,
    private readonly accounts: AccountCache,
    private readonly log: Logger,
    private readonly flushMs = 50,
    private readonly maxBatch = 500,
  ) {}

  record(rec: LlmCallRecord): void {
    this.queue.push(rec);
    if (this.queue.length >= this.maxBatch && !this.flushing) void this.flush();
    else this.schedule(this.flushMs);
  }

  private schedule(ms: number): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, ms);
  }

  /** Writes what is queued, one batch at a time; a caller during a write shares it and the rest follows. */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    if (this.queue.length === 0) return Promise.resolve();
    const batch = this.queue.splice(0, this.maxBatch);
    this.flushing = this.write(batch)
      .then(() => {
        this.failures = 0;
      })
      .catch((err: unknown) => {
        this.queue.unshift(...batch);
        this.failures++;
        this.log.error('llm usage write failed; will retry', { records: batch.length, ...errorFields(err) });
      })
      .finally(() => {
        this.flushing = undefined;
        if (this.queue.length) this.schedule(this.failures ? Math.min(5_000, 100 * 2 ** this.failures) : 0);
      });
    return this.flushing;
  }

  /**
   * One transaction per batch, three statements whatever its size: the task rows and ledger rows
   * go in as `unnest` arrays (no per-row query building on the event loop), the balances as one
   * update over the per-account totals.
   */
  private async write(batch: LlmCallRecord[]): Promise<void> {
    const finishedAt = new Date().toISOString();
    // Summed in exact units, so the balance always equals the sum of the ledger rows.
    const totals = new Map<number, bigint>();
    for (const rec of batch) if (rec.costUsd > 0) totals.set(rec.accountId, (totals.get(rec.accountId) ?? 0n) + toUnits(rec.costUsd));
    await this.db.transaction().execute(async (trx) => {
      // The rows travel as one JSON document: one JSON.stringify for the batch, no per-element
      // escaping of a jsonb[] array literal by the driver (the inputs are the bulk of the bytes).
      const rows = batch.map((r) => ({
        id: r.taskId,
        account_id: r.accountId,
        model: r.model,
        provider: r.provider,
        status: r.status,
        input: r.input,
        output: r.output,
        error_message: r.errorMessage ?? null,
        cost_usd: toUsdString(r.costUsd),
        created_at: r.createdAt.toISOString(),
      }));
      await sql`insert into tasks (id, account_id, model, provider, category, status, input, output, error_message, cost_usd, created_at, finished_at)
        select id, account_id, model, provider, 'llm', status, input, output, error_message, cost_usd, created_at, ${finishedAt}::timestamptz
        from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
          as t(id text, account_id int, model text, provider text, status text, input jsonb, output jsonb, error_message text, cost_usd numeric, created_at timestamptz)
        on conflict (id) do nothing`.execute(trx);
      if (totals.size === 0) return;
      // Post-paid usage: charged in full even below zero; the next call is then refused.
      const ids = [...totals.keys()];
      const balances = await sql<{ id: number; balance_usd: string }>`
        update accounts as a set balance_usd = a.balance_usd - t.total, updated_at = now()
        from unnest(${ids}::int[], ${ids.map((id) => fromUnits(totals.get(id) ?? 0n))}::numeric[]) as t(id, total)
        where a.id = t.id returning a.id, a.balance_usd`.execute(trx);
      // Walk back from each new balance so every ledger row carries the balance right after it.
      const after = new Map(balances.rows.map((row) => [row.id, toUnits(row.balance_usd)]));
      const charged = batch.filter((r) => r.costUsd > 0 && after.has(r.accountId));
      const balanceAfter: string[] = new Array(charged.length);
      for (let i = charged.length - 1; i >= 0; i--) {
        const rec = charged[i] as LlmCallRecord;
        const units = after.get(rec.accountId) ?? 0n;
        balanceAfter[i] = fromUnits(units);
        after.set(rec.accountId, units + toUnits(rec.costUsd));
      }
      await sql`insert into ledger_entries (account_id, amount_usd, balance_after_usd, kind, task_id, category, note)
        select account_id, amount_usd, balance_after_usd, 'charge', task_id, 'llm', note
        from unnest(${charged.map((r) => r.accountId)}::int[], ${charged.map((r) => toUsdString(-r.costUsd))}::numeric[],
                    ${balanceAfter}::numeric[], ${charged.map((r) => r.taskId)}::text[], ${charged.map((r) => r.model)}::text[])
          as l(account_id, amount_usd, balance_after_usd, task_id, note)`.execute(trx);
    });
    for (const id of totals.keys()) void this.accounts.changed(id);
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    for (let attempt = 0; attempt < 5 && (this.queue.length || this.flushing); attempt++) {
      await this.flush();
      if (this.queue.length) await Bun.sleep(200);
    }
    if (this.queue.length) this.log.error('llm usage records lost at shutdown', { records: this.queue.length });
  }
}

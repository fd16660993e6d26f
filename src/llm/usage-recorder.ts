import { sql } from 'kysely';
import type { AccountCache } from '../accounts/account-cache.ts';
import { toUsdString } from '../accounts/money.ts';
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
    if (this.queue.length >= this.maxBatch) void this.flush();
    else this.schedule(this.flushMs);
  }

  private schedule(ms: number): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, ms);
  }

  /** Writes everything queued so far; concurrent callers share one write. */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.queue.length === 0) return;
    const batch = this.queue.splice(0, this.maxBatch);
    this.flushing = this.write(batch)
      .then(() => {
        this.failures = 0;
      })
      .catch((err: unknown) => {
        this.queue.unshift(...batch);
        this.failures++;
        this.log.error('llm usage write failed; will retry', { records: batch.length, ...errorFields(err) });
        this.schedule(Math.min(5_000, 100 * 2 ** this.failures));
      })
      .finally(() => {
        this.flushing = undefined;
      });
    await this.flushing;
    if (this.queue.length && this.failures === 0) this.schedule(0);
  }

  private async write(batch: LlmCallRecord[]): Promise<void> {
    const charged = new Map<number, LlmCallRecord[]>();
    for (const rec of batch) {
      if (rec.costUsd <= 0) continue;
      const list = charged.get(rec.accountId) ?? [];
      list.push(rec);
      charged.set(rec.accountId, list);
    }
    await this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('tasks')
        .values(
          batch.map((rec) => ({
            id: rec.taskId,
            account_id: rec.accountId,
            model: rec.model,
            provider: rec.provider,
            category: 'llm',
            status: rec.status,
            input: JSON.stringify(rec.input),
            output: rec.output === null ? null : JSON.stringify(rec.output),
            error_message: rec.errorMessage ?? null,
            cost_usd: toUsdString(rec.costUsd),
            created_at: rec.createdAt,
            finished_at: new Date(),
          })),
        )
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
      const ledgerRows = [];
      for (const [accountId, recs] of charged) {
        const total = recs.reduce((sum, r) => sum + r.costUsd, 0);
        // Post-paid usage: charged in full even below zero; the next call is then refused.
        const updated = await trx
          .updateTable('accounts')
          .set({ balance_usd: sql`balance_usd - ${toUsdString(total)}::numeric`, updated_at: sql`now()` })
          .where('id', '=', accountId)
          .returning('balance_usd')
          .executeTakeFirst();
        if (!updated) continue;
        // Walk back from the new balance so each ledger row carries the balance right after it.
        let after = Number(updated.balance_usd);
        const rows = [];
        for (let i = recs.length - 1; i >= 0; i--) {
          const rec = recs[i];
          if (!rec) continue;
          rows.unshift({ account_id: accountId, amount_usd: toUsdString(-rec.costUsd), balance_after_usd: toUsdString(after), kind: 'charge' as const, task_id: rec.taskId, category: 'llm', note: rec.model });
          after += rec.costUsd;
        }
        ledgerRows.push(...rows);
      }
      if (ledgerRows.length) await trx.insertInto('ledger_entries').values(ledgerRows).execute();
    });
    await Promise.all([...charged.keys()].map((id) => this.accounts.changed(id)));
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

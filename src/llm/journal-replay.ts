import type { AccountCache } from '../accounts/account-cache.ts';
import { isPoisonError, pauseBeforeRetry } from '../db/db-errors.ts';
import type { Db } from '../db/database.ts';
import type { RunPrepared } from '../db/prepared.ts';
import { setAside } from '../ops/dead-letters.repository.ts';
import { existingTaskIds } from '../tasks/tasks.repository.ts';
import type { Logger } from '../ops/logger.ts';
import { errorFields } from '../ops/logger.ts';
import { type SettlementRow, settleLlmCalls } from './llm-settlement.repository.ts';
import type { SettlementJournal } from './settlement-journal.ts';

/**
 * Settles what the previous process of this worker slot journaled and may not have settled, then
 * empties the journal; run before the process serves. Calls that already have their task row are
 * left out (one lookup); each entry's other calls are settled as one batch at the time it was
 * journaled. Should a call be recorded in between anyway, the statement moves no money for it (a
 * batch partly recorded fails with a data error and is settled call by call), and a call that
 * can never be written is set aside in `dead_letters`, as a live settlement would. A database
 * that is unreachable is waited for: the journal is the only copy of these charges.
 */
export async function replayJournal(
  db: Db,
  prepared: RunPrepared,
  journal: SettlementJournal,
  accounts: AccountCache,
  log: Logger,
): Promise<void> {
  if (journal.unreadable)
    log.error('settlement journal lines could not be read; the files are kept as copies', {
      path: journal.path,
      lines: journal.unreadable,
      copies: journal.damagedCopies,
    });
  // Most of a crashed process's lines were settled before it died: one lookup finds those, and
  // only the rest are settled, line by line (the statement would skip them too, one at a time).
  const settled = await settledAlready(db, journal, log);
  let calls = 0;
  for (const entry of journal.leftOver) {
    const rows = entry.rows.filter((r) => !settled.has(r.id)).map((r, ord) => ({ ...r, ord }));
    calls += rows.length;
    if (rows.length) await settleEntry(db, prepared, rows, entry.at, accounts, log);
  }
  if (journal.leftOver.length)
    log.warn('replayed the settlement journal a stopped process left', {
      path: journal.path,
      calls,
      already_settled: settled.size,
    });
  // Everything readable is in the database now; what was not is in the copies.
  journal.reset();
}

/**
 * The left-over calls that have a task row already, asked until the database answers (the journal
 * is the only copy of the others). Ids the lookup cannot take (a data error) are left to the
 * line-by-line path, which sets such a call aside.
 */
async function settledAlready(db: Db, journal: SettlementJournal, log: Logger): Promise<Set<string>> {
  const ids = journal.leftOver.flatMap((e) => e.rows.map((r) => r.id));
  for (let attempt = 1; ; attempt++) {
    try {
      return await existingTaskIds(db, ids);
    } catch (err) {
      if (isPoisonError(err)) return new Set();
      log.error('reading which journaled calls are settled failed; will retry', { attempt, ...errorFields(err) });
      await pauseBeforeRetry(attempt);
    }
  }
}

async function settleEntry(
  db: Db,
  prepared: RunPrepared,
  rows: SettlementRow[],
  at: string,
  accounts: AccountCache,
  log: Logger,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      const settled = await settleLlmCalls(db, prepared, rows, at);
      accounts.changedSoon(settled.accounts);
      return;
    } catch (err) {
      if (isPoisonError(err)) {
        if (rows.length > 1) {
          for (const row of rows) await settleEntry(db, prepared, [{ ...row, ord: 0 }], at, accounts, log);
          return;
        }
        const row = rows[0] as SettlementRow;
        log.error('journaled llm usage record set aside in dead_letters', { task_id: row.id, ...errorFields(err) });
        await setAside(db, 'llm_usage', JSON.stringify(row), err instanceof Error ? err.message : String(err));
        return;
      }
      log.error('settling the journal failed; will retry', { attempt, ...errorFields(err) });
      await pauseBeforeRetry(attempt);
    }
  }
}

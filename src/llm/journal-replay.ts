import type { AccountCache } from '../accounts/account-cache.ts';
import { isPoisonError } from '../db/db-errors.ts';
import type { Db } from '../db/database.ts';
import type { RunPrepared } from '../db/prepared.ts';
import { setAside } from '../ops/dead-letters.repository.ts';
import type { Logger } from '../ops/logger.ts';
import { errorFields } from '../ops/logger.ts';
import { type SettlementRow, settleLlmCalls } from './llm-settlement.repository.ts';
import type { SettlementJournal } from './settlement-journal.ts';

/**
 * Settles what the previous process of this worker slot journaled and may not have settled, then
 * empties the journal; run before the process serves. Each entry is settled as one batch at the
 * time it was journaled: calls it already recorded move no money, a batch partly recorded is
 * settled call by call (its statement fails with a data error), and a call that can never be
 * written is set aside in `dead_letters`, as a live settlement would. A database that is
 * unreachable is waited for: the journal is the only copy of these charges.
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
  let calls = 0;
  for (const entry of journal.leftOver) {
    calls += entry.rows.length;
    await settleEntry(db, prepared, entry.rows, entry.at, accounts, log);
  }
  // Calls its process had settled already are among them: those moved no money now.
  if (calls) log.warn('replayed the settlement journal a stopped process left', { path: journal.path, calls });
  // Everything readable is in the database now; what was not is in the copies.
  journal.reset();
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
      await Bun.sleep(Math.min(5_000, 100 * 2 ** attempt));
    }
  }
}

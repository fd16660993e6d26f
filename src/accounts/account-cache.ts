import type { Db } from '../db/database.ts';
import type { AccountRow } from '../db/tables/accounts.table.ts';
import type { Store } from '../store/store.ts';
import { findAccountById } from './accounts.repository.ts';

const CHANGED_CHANNEL = 'account:changed';
const TTL_MS = 60_000;
/** Longest a settlement's invalidation waits to travel to the other instances with later ones. */
const COALESCE_MS = 20;

/**
 * Account rows cached per instance. Whoever changes an account (ledger, signing, key) calls
 * `changed(id)`, which drops it here and on every other instance through pub/sub; the TTL is a
 * backstop for a lost message. The money paths that settle in batches call `changedSoon` instead:
 * the row is dropped here at once, and the other instances hear of every row changed within
 * `COALESCE_MS` in one message, so a busy instance publishes at most 50 a second instead of one
 * per settlement batch (with its echo to this instance's own subscriber).
 * A message lists ids separated by commas.
 */
export class AccountCache {
  private readonly entries = new Map<number, { row: AccountRow; expiresAt: number }>();
  private readonly pending = new Set<number>();
  /**
   * The reads under way, by account: a change announced while one is under way marks it, and its
   * row (which may predate the change) is not kept. Per account: settlements announce changes
   * many times a second, and a global count would keep every other account's reads uncached.
   */
  private readonly reading = new Map<number, Set<{ changed: boolean }>>();
  private flushTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly db: Db,
    private readonly store: Store,
  ) {}

  async start(): Promise<void> {
    await this.store.subscribe(CHANGED_CHANNEL, (message) => {
      for (const id of message.split(',')) this.drop(Number(id));
    });
    // Messages may have been missed while the connection was away: nothing cached is trusted.
    this.store.onResubscribed(() => {
      this.entries.clear();
      for (const marks of this.reading.values()) for (const mark of marks) mark.changed = true;
    });
  }

  async get(id: number): Promise<AccountRow | undefined> {
    const hit = this.entries.get(id);
    if (hit && hit.expiresAt > Date.now()) return hit.row;
    const mark = { changed: false };
    const marks = this.reading.get(id) ?? new Set<{ changed: boolean }>();
    this.reading.set(id, marks);
    marks.add(mark);
    try {
      const row = await findAccountById(this.db, id);
      // A change announced while the row was read may postdate it: the row is not kept.
      if (row && !mark.changed) this.entries.set(id, { row, expiresAt: Date.now() + TTL_MS });
      return row;
    } finally {
      marks.delete(mark);
      if (marks.size === 0) this.reading.delete(id);
    }
  }

  /** The account's row is stale: dropped, and any read of it under way not kept. */
  private drop(id: number): void {
    this.entries.delete(id);
    for (const mark of this.reading.get(id) ?? []) mark.changed = true;
  }

  /** Dropped here and on every instance now (with any invalidation still waiting). */
  async changed(id: number): Promise<void> {
    this.drop(id);
    this.pending.add(id);
    await this.flush();
  }

  /** Dropped here now and on the other instances within `COALESCE_MS`. */
  changedSoon(ids: Iterable<number>): void {
    for (const id of ids) {
      this.drop(id);
      this.pending.add(id);
    }
    if (this.pending.size === 0 || this.flushTimer) return;
    this.flushTimer = setTimeout(() => {
      // A lost message leaves other instances' rows stale for the TTL at most, as any lost message does.
      this.flush().catch(() => undefined);
    }, COALESCE_MS);
    this.flushTimer.unref?.();
  }

  /** Publishes what is waiting (shutdown calls it before the store closes). */
  async flush(): Promise<void> {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.pending.size === 0) return;
    const ids = [...this.pending].join(',');
    this.pending.clear();
    await this.store.publish(CHANGED_CHANNEL, ids);
  }
}

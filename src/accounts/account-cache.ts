import type { Db } from '../db/database.ts';
import type { AccountRow } from '../db/tables/accounts.table.ts';
import type { Store } from '../store/store.ts';
import { findAccountById } from './accounts.repository.ts';

const CHANGED_CHANNEL = 'account:changed';
const TTL_MS = 60_000;

/**
 * Account rows cached per instance. Whoever changes an account (ledger, signing, key) calls
 * `changed(id)`, which drops it here and on every other instance through pub/sub; the TTL is a
 * backstop for a lost message.
 */
export class AccountCache {
  private readonly entries = new Map<number, { row: AccountRow; expiresAt: number }>();

  constructor(
    private readonly db: Db,
    private readonly store: Store,
  ) {}

  async start(): Promise<void> {
    await this.store.subscribe(CHANGED_CHANNEL, (id) => this.entries.delete(Number(id)));
  }

  async get(id: number): Promise<AccountRow | undefined> {
    const hit = this.entries.get(id);
    if (hit && hit.expiresAt > Date.now()) return hit.row;
    const row = await findAccountById(this.db, id);
    if (row) this.entries.set(id, { row, expiresAt: Date.now() + TTL_MS });
    return row;
  }

  async changed(id: number): Promise<void> {
    this.entries.delete(id);
    await this.store.publish(CHANGED_CHANNEL, String(id));
  }
}

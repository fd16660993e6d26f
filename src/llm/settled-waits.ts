/** Longest a read waits for its account's settlements before it reads what the database has. */
const MAX_WAIT_MS = 2_000;

/**
 * Calls answered but not yet settled in the database, counted by account, so that a read of an
 * account's money or records on this process can first wait for that account's own calls
 * (docs/money.md, "The settlement journal"). An account with nothing pending costs one map
 * lookup and no promise.
 */
export class SettledWaits {
  private readonly counts = new Map<number, number>();
  private readonly waiters = new Map<number, Array<() => void>>();
  private everyone: Array<() => void> = [];
  total = 0;

  add(accountId: number): void {
    this.counts.set(accountId, (this.counts.get(accountId) ?? 0) + 1);
    this.total++;
  }

  done(accountId: number): void {
    this.total--;
    const left = (this.counts.get(accountId) ?? 1) - 1;
    if (left > 0) {
      this.counts.set(accountId, left);
    } else {
      this.counts.delete(accountId);
      const waiting = this.waiters.get(accountId);
      if (waiting) {
        this.waiters.delete(accountId);
        for (const resolve of waiting) resolve();
      }
    }
    if (this.total === 0) for (const resolve of this.everyone.splice(0)) resolve();
  }

  /**
   * Undefined when the account has nothing pending here; otherwise resolves once it has, or after
   * `MAX_WAIT_MS` (a database that is down must not hang reads: they then see the last commit).
   */
  settled(accountId: number): Promise<void> | undefined {
    if (!this.counts.has(accountId)) return undefined;
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, MAX_WAIT_MS);
      const list = this.waiters.get(accountId) ?? [];
      list.push(() => {
        clearTimeout(timer);
        resolve();
      });
      this.waiters.set(accountId, list);
    });
  }

  /** Resolves once nothing is pending for any account (shutdown). */
  none(): Promise<void> {
    if (this.total === 0) return Promise.resolve();
    return new Promise((resolve) => this.everyone.push(resolve));
  }
}

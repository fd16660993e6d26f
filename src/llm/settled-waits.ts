/** Longest a read waits for its account's settlements before it reads what the database has. */
const MAX_WAIT_MS = 2_000;

/**
 * Calls answered but not yet settled in the database, by account, so that a read of an
 * account's money or records on this process can first wait for that account's own calls
 * (docs/money.md, "The settlement journal"). A read waits for the settlements pending when it
 * arrives, not for calls answered after it: an account calling without pause never starves its
 * reads. An account with nothing pending costs one map lookup and no promise.
 */
export class SettledWaits {
  private readonly pending = new Map<number, Set<Promise<void>>>();
  private everyone: Array<() => void> = [];
  total = 0;

  /** Counts `settlement` against the account until it settles (it must never reject). */
  track(accountId: number, settlement: Promise<void>): void {
    let set = this.pending.get(accountId);
    if (!set) {
      set = new Set();
      this.pending.set(accountId, set);
    }
    set.add(settlement);
    this.total++;
    void settlement.then(() => this.done(accountId, settlement));
  }

  private done(accountId: number, settlement: Promise<void>): void {
    this.total--;
    const set = this.pending.get(accountId);
    set?.delete(settlement);
    if (set?.size === 0) this.pending.delete(accountId);
    if (this.total === 0) for (const resolve of this.everyone.splice(0)) resolve();
  }

  /**
   * Undefined when the account has nothing pending here; otherwise resolves once what is pending
   * now has settled, or after `MAX_WAIT_MS` (a database that is down must not hang reads: they
   * then see the last commit).
   */
  settled(accountId: number): Promise<void> | undefined {
    const set = this.pending.get(accountId);
    if (!set) return undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, MAX_WAIT_MS);
    });
    return Promise.race([Promise.all(set).then(() => undefined), timeout]).finally(() => clearTimeout(timer));
  }

  /** Resolves once nothing is pending for any account (shutdown). */
  none(): Promise<void> {
    if (this.total === 0) return Promise.resolve();
    return new Promise((resolve) => this.everyone.push(resolve));
  }
}

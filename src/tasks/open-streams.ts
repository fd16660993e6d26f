/**
 * Task event streams each account holds open on this instance, up to a limit. A stream is a
 * connection (a file descriptor) held for as long as its task runs, and every heartbeat re-reads
 * the task: rate limits count requests, not what they hold open, so without this one account
 * could open enough streams to take the descriptors and the database reads every other account
 * needs. Per instance: what it bounds is the instance's own resources.
 */
export class OpenStreams {
  private readonly open = new Map<number, number>();

  constructor(private readonly maxPerAccount: number) {}

  /** Counts one more stream of the account; false (nothing counted) when it holds the most already. */
  tryOpen(accountId: number): boolean {
    const n = this.open.get(accountId) ?? 0;
    if (n >= this.maxPerAccount) return false;
    this.open.set(accountId, n + 1);
    return true;
  }

  /** One of the account's streams ended. */
  close(accountId: number): void {
    const n = (this.open.get(accountId) ?? 0) - 1;
    if (n > 0) this.open.set(accountId, n);
    else this.open.delete(accountId);
  }
}

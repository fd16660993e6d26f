import type { Logger } from '../ops/logger.ts';
import { errorFields } from '../ops/logger.ts';
import type { Store } from '../store/store.ts';

/** One channel for every task: each instance subscribes once, whatever number of streams it serves. */
const CHANNEL = 'task-changes';

/**
 * "This task's record changed", across instances, over the store's pub/sub (Redis, or the
 * in-process bus of the embedded mode, which has a single instance). Messages carry only the
 * task id: a listener re-reads the record, scoped to its own account, so nothing a message says
 * is trusted and a lost message costs at most one heartbeat (the streams re-read then too).
 */
export class TaskEvents {
  private readonly listeners = new Map<string, Set<() => void>>();
  /** Reads under way, by task, then by reader key (account and task). */
  private readonly reads = new Map<string, Map<string, Promise<unknown>>>();
  private subscription?: Promise<() => Promise<void>>;
  private readonly closing = new AbortController();

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
  ) {}

  /** Announces a committed change of `taskId` to every instance (this one included). */
  changed(taskId: string): void {
    this.store
      .publish(CHANNEL, taskId)
      .catch((err: unknown) => this.log.warn('task change not published', { task_id: taskId, ...errorFields(err) }));
  }

  /**
   * Calls `listener` on each change of `taskId` until the returned function is called. Should the
   * store refuse the subscription (Redis down), the stream still works on its heartbeat re-reads.
   */
  async watch(taskId: string, listener: () => void): Promise<() => void> {
    await this.subscribe().catch((err: unknown) =>
      this.log.warn('task changes not subscribed; streams fall back to heartbeats', errorFields(err)),
    );
    let set = this.listeners.get(taskId);
    if (!set) {
      set = new Set();
      this.listeners.set(taskId, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(taskId) === set) this.listeners.delete(taskId);
    };
  }

  /**
   * Many streams of one task on this instance re-read it once per change, not once each: a read
   * joins one under way for the same `key` (which must name the account and the task), unless a
   * change notice of the task came since that one began.
   */
  shareRead<T>(taskId: string, key: string, load: () => Promise<T>): Promise<T> {
    let byKey = this.reads.get(taskId);
    const running = byKey?.get(key);
    // Only `load`s for this same key are stored under it, so the type is the caller's own.
    if (running) return running as Promise<T>;
    if (!byKey) {
      byKey = new Map();
      this.reads.set(taskId, byKey);
    }
    const mine = byKey;
    const promise = load().finally(() => {
      if (mine.get(key) === promise) mine.delete(key);
      if (mine.size === 0 && this.reads.get(taskId) === mine) this.reads.delete(taskId);
    });
    mine.set(key, promise);
    return promise;
  }

  private subscribe(): Promise<() => Promise<void>> {
    this.subscription ??= this.store
      .subscribe(CHANNEL, (taskId) => {
        // Reads begun before this notice may predate the change: none is joined any more.
        this.reads.delete(taskId);
        for (const listener of this.listeners.get(taskId) ?? []) listener();
      })
      .catch((err: unknown) => {
        // The next stream tries again rather than every stream failing for good.
        this.subscription = undefined;
        throw err;
      });
    return this.subscription;
  }

  /** Aborted by `close`: streams end at shutdown instead of holding the server open. */
  get shutdown(): AbortSignal {
    return this.closing.signal;
  }

  async close(): Promise<void> {
    this.closing.abort();
    const unsubscribe = await this.subscription?.catch(() => undefined);
    this.subscription = undefined;
    await unsubscribe?.();
  }
}

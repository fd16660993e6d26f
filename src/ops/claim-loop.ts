import type { Logger } from './logger.ts';
import { errorFields } from './logger.ts';

export interface ClaimLoopOptions<T> {
  /** For log lines: `task`, `webhook`. */
  name: string;
  /** Items worked on at once by this instance. */
  concurrency: number;
  /** Most items one claim takes. */
  maxClaim?: number;
  /** How long to wait before looking again when a claim came back short (200 ms). */
  idleMs?: number;
  /**
   * The longest wait between claims that found nothing: each empty claim doubles the wait from
   * `idleMs` up to this (2 s). Work this instance creates or releases wakes it on time anyway
   * (`wake`, `wakeAt`); the wait bounds how late it sees work of other instances (2 s).
   */
  maxIdleMs?: number;
  /** Takes up to `limit` due items from the shared queue (claimed for this instance). */
  claim(limit: number): Promise<T[]>;
  /** Works on one item; never rejects for a reason the loop should hear about. */
  run(item: T): Promise<void>;
  log: Logger;
}

/** Past a due time before claiming: the database's clock decides what is due, and may be a little behind. */
const DUE_SLACK_MS = 5;

/**
 * The loop behind every durable queue here (media tasks, webhook deliveries): claim as many due
 * items as there are free slots, run them concurrently, look again at once when a claim filled
 * every slot or a slot frees up, when woken by new local work, when work released here comes due,
 * and otherwise after an idle wait that doubles while claims find nothing (`idleMs` up to
 * `maxIdleMs`): an idle instance does not poll its database ten times a second.
 */
export class ClaimLoop<T> {
  private active = 0;
  private stopping = false;
  private claiming = false;
  private timer?: ReturnType<typeof setTimeout>;
  /** When `timer` fires (epoch ms). */
  private timerAt = 0;
  private claimInFlight: Promise<unknown> | undefined;
  /** When work released by this instance comes due (epoch ms), so it is claimed then. */
  private dues: number[] = [];
  private readonly idleMs: number;
  private readonly maxIdleMs: number;
  private idleFor: number;

  constructor(private readonly opts: ClaimLoopOptions<T>) {
    this.idleMs = opts.idleMs ?? 200;
    this.maxIdleMs = Math.max(this.idleMs, opts.maxIdleMs ?? 2000);
    this.idleFor = this.idleMs;
  }

  /** Items being worked on now. */
  get running(): number {
    return this.active;
  }

  start(): void {
    this.schedule(0);
  }

  /** New work was created here: look now instead of at the next idle tick. */
  wake(): void {
    this.idleFor = this.idleMs;
    this.schedule(0);
  }

  /** Work this instance released (a task's next poll, a delivery's retry) comes due in `ms`. */
  wakeAt(ms: number): void {
    const at = Date.now() + Math.max(0, ms) + DUE_SLACK_MS;
    this.dues.push(at);
    if (!this.claiming && (!this.timer || this.timerAt > at)) this.schedule(this.idleFor);
  }

  /**
   * Resolves once a claim under way when this is called has returned and its items have started:
   * an owner stopping awaits it, so no item claimed during the stop starts after the owner let go
   * of its database.
   */
  async settled(): Promise<void> {
    await this.claimInFlight;
  }

  /** Stops claiming; items already running carry on (their owners decide what stop means). */
  stop(): void {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
  }

  /** The next tick in `ms`, or sooner if work released here comes due before. */
  private schedule(ms: number): void {
    if (this.stopping) return;
    if (this.timer) clearTimeout(this.timer);
    const now = Date.now();
    let at = now + ms;
    for (const due of this.dues) if (due < at) at = due;
    this.timerAt = at;
    this.timer = setTimeout(() => void this.tick(), Math.max(0, at - now));
  }

  private async claimAndStart(free: number): Promise<T[]> {
    let claimed: T[] = [];
    try {
      claimed = await this.opts.claim(free);
    } catch (err) {
      this.opts.log.error(`${this.opts.name} claim failed`, errorFields(err));
    } finally {
      this.claiming = false;
    }
    for (const item of claimed) {
      this.active++;
      void this.opts.run(item).finally(() => {
        this.active--;
        this.schedule(0);
      });
    }
    return claimed;
  }

  private async tick(): Promise<void> {
    this.timer = undefined;
    const free = Math.min(this.opts.concurrency - this.active, this.opts.maxClaim ?? Number.POSITIVE_INFINITY);
    if (this.stopping || this.claiming || free <= 0) return;
    // What has come due is claimed now (or was by another instance): forget it.
    const now = Date.now();
    if (this.dues.length) this.dues = this.dues.filter((due) => due > now);
    this.claiming = true;
    const pass = this.claimAndStart(free);
    this.claimInFlight = pass;
    const claimed = await pass;
    // A full claim may mean more is due; otherwise wait for the next tick or a wake.
    if (claimed.length === free) return this.schedule(0);
    if (claimed.length > 0) this.idleFor = this.idleMs;
    this.schedule(this.idleFor);
    if (claimed.length === 0) this.idleFor = Math.min(this.idleFor * 2, this.maxIdleMs);
  }
}

import type { Logger } from './logger.ts';
import { errorFields } from './logger.ts';

export interface ClaimLoopOptions<T> {
  /** For log lines: `task`, `webhook`. */
  name: string;
  /** Items worked on at once by this instance. */
  concurrency: number;
  /** Most items one claim takes. */
  maxClaim?: number;
  /** How long to wait before looking again when a claim came back short. */
  idleMs?: number;
  /** Takes up to `limit` due items from the shared queue (claimed for this instance). */
  claim(limit: number): Promise<T[]>;
  /** Works on one item; never rejects for a reason the loop should hear about. */
  run(item: T): Promise<void>;
  log: Logger;
}

/**
 * The loop behind every durable queue here (media tasks, webhook deliveries): claim as many due
 * items as there are free slots, run them concurrently, look again at once when a claim filled
 * every slot or a slot frees up, and otherwise every `idleMs` or when woken by new local work.
 */
export class ClaimLoop<T> {
  private active = 0;
  private stopping = false;
  private claiming = false;
  private timer?: ReturnType<typeof setTimeout>;
  private claimInFlight: Promise<unknown> | undefined;

  constructor(private readonly opts: ClaimLoopOptions<T>) {}

  /** Items being worked on now. */
  get running(): number {
    return this.active;
  }

  start(): void {
    this.schedule(0);
  }

  /** New work was created here: look now instead of at the next idle tick. */
  wake(): void {
    this.schedule(0);
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

  private schedule(ms: number): void {
    if (this.stopping) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), ms);
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
    this.claiming = true;
    const pass = this.claimAndStart(free);
    this.claimInFlight = pass;
    const claimed = await pass;
    // A full claim may mean more is due; otherwise wait for the next tick or a wake.
    this.schedule(claimed.length === free ? 0 : (this.opts.idleMs ?? 200));
  }
}

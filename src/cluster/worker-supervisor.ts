import type { Subprocess } from 'bun';
import { errorFields, type Logger } from '../ops/logger.ts';
import { relayLines } from './line-relay.ts';
import { WORKER_INDEX_ENV } from './worker-role.ts';

export interface WorkerSupervisorOptions {
  /** Processes to spawn besides the primary: slots 1 … count. */
  count: number;
  log: Logger;
  /** The entry to run; the primary's own by default. */
  command?: string[];
  env?: Record<string, string | undefined>;
  /** First restart delay after a crash; doubled per crash in a row, up to `maxBackoffMs`. */
  backoffMs?: number;
  maxBackoffMs?: number;
  /** A worker that ran this long before crashing starts its backoff over. */
  healthyAfterMs?: number;
  /** How long a stopping worker may drain before it is killed. */
  stopGraceMs?: number;
}

interface Slot {
  index: number;
  proc?: Subprocess<'ignore', 'pipe', 'pipe'>;
  /** Its stdout and stderr being relayed; settles once both have ended. */
  output?: Promise<unknown>;
  startedAt: number;
  crashesInARow: number;
  restartTimer?: ReturnType<typeof setTimeout>;
}

/**
 * The primary's workers (docs/scaling.md): spawns `count` more processes of the same entry, each
 * listening on the same port with `reusePort`; restarts one that exits while the primary is not
 * stopping, with a backoff so a worker failing at start does not spin; on stop, forwards the
 * signal and waits for each to drain, killing what outlives the grace period.
 */
export class WorkerSupervisor {
  private readonly slots: Slot[];
  private stopping = false;
  private readonly command: string[];
  private readonly backoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly healthyAfterMs: number;
  private readonly handlers: Array<(slot: number, message: unknown) => void> = [];
  private port = 0;

  constructor(private readonly opts: WorkerSupervisorOptions) {
    this.slots = Array.from({ length: opts.count }, (_, i) => ({ index: i + 1, startedAt: 0, crashesInARow: 0 }));
    this.command = opts.command ?? [process.execPath, Bun.main];
    this.backoffMs = opts.backoffMs ?? 1000;
    this.maxBackoffMs = opts.maxBackoffMs ?? 30_000;
    this.healthyAfterMs = opts.healthyAfterMs ?? 30_000;
  }

  /** `port`: the one the primary listens on (its real one, so `PORT=0` works too). */
  start(port: number): void {
    this.port = port;
    for (const slot of this.slots) this.spawn(slot);
  }

  /** Slots whose worker is running now. */
  runningSlots(): number[] {
    return this.slots.flatMap((s) =>
      s.proc && s.proc.exitCode === null && s.proc.signalCode === null ? [s.index] : [],
    );
  }

  /** Messages from workers (over the IPC channel each is spawned with), with the sender's slot. */
  onMessage(handler: (slot: number, message: unknown) => void): void {
    this.handlers.push(handler);
  }

  /** Sends to the worker in `slot`; false when it is not running. */
  send(slot: number, message: unknown): boolean {
    const proc = this.slots[slot - 1]?.proc;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return false;
    try {
      proc.send(message);
      return true;
    } catch {
      return false; // the channel closed as the worker exits
    }
  }

  private spawn(slot: Slot): void {
    slot.restartTimer = undefined;
    if (this.stopping) return;
    let proc: Subprocess<'ignore', 'pipe', 'pipe'>;
    try {
      proc = Bun.spawn(this.command, {
        env: { ...(this.opts.env ?? process.env), PORT: String(this.port), [WORKER_INDEX_ENV]: String(slot.index) },
        stdin: 'ignore',
        // Relayed line by line to the primary's own stdout and stderr (src/cluster/line-relay.ts).
        stdout: 'pipe',
        stderr: 'pipe',
        ipc: (message) => {
          for (const handler of this.handlers) handler(slot.index, message);
        },
        onExit: (exited, exitCode, signalCode): void => this.exited(slot, exited, exitCode, signalCode),
      });
    } catch (err) {
      // Out of processes or memory: tried again later, like a worker that crashed at once.
      slot.crashesInARow++;
      const delay = this.backoff(slot);
      this.opts.log.error('worker could not be started', {
        worker_slot: slot.index,
        restart_in_ms: delay,
        ...errorFields(err),
      });
      slot.restartTimer = setTimeout(() => this.spawn(slot), delay);
      return;
    }
    slot.proc = proc;
    slot.output = Promise.allSettled([
      relayLines(proc.stdout, (bytes) => process.stdout.write(bytes)),
      relayLines(proc.stderr, (bytes) => process.stderr.write(bytes)),
    ]);
    slot.startedAt = Date.now();
    this.opts.log.info('worker started', { worker_slot: slot.index, worker_pid: proc.pid });
  }

  /** Delay before the next start: doubled per crash in a row, capped. */
  private backoff(slot: Slot): number {
    return Math.min(this.maxBackoffMs, this.backoffMs * 2 ** (slot.crashesInARow - 1));
  }

  private exited(
    slot: Slot,
    proc: Subprocess,
    exitCode: number | null,
    signalCode: number | NodeJS.Signals | null,
  ): void {
    if (this.stopping || slot.proc !== proc) return;
    const ranMs = Date.now() - slot.startedAt;
    slot.crashesInARow = ranMs >= this.healthyAfterMs ? 1 : slot.crashesInARow + 1;
    const delay = this.backoff(slot);
    this.opts.log.error('worker exited; restarting', {
      worker_slot: slot.index,
      worker_pid: proc.pid,
      exit_code: exitCode,
      signal: signalCode,
      ran_ms: ranMs,
      restart_in_ms: delay,
    });
    this.opts.log.flush();
    slot.restartTimer = setTimeout(() => this.spawn(slot), delay);
  }

  /**
   * Forwards `signal` to every worker and waits for them to exit. True when all of them exited
   * with code 0 by themselves (a drained shutdown), false when one failed or had to be killed.
   */
  async stop(signal: NodeJS.Signals): Promise<boolean> {
    this.stopping = true;
    const running: Array<{ index: number; proc: Subprocess; output?: Promise<unknown> }> = [];
    for (const slot of this.slots) {
      if (slot.restartTimer) clearTimeout(slot.restartTimer);
      slot.restartTimer = undefined;
      const proc = slot.proc;
      if (proc && proc.exitCode === null && proc.signalCode === null) {
        proc.kill(signal);
        running.push({ index: slot.index, proc, output: slot.output });
      }
    }
    const grace = this.opts.stopGraceMs ?? 30_000;
    const results = await Promise.all(
      running.map(async ({ index, proc, output }) => {
        const killer = setTimeout(() => {
          this.opts.log.error('worker did not stop in time; killing it', { worker_slot: index, worker_pid: proc.pid });
          proc.kill('SIGKILL');
        }, grace);
        const code = await proc.exited;
        clearTimeout(killer);
        // Its last lines ("stopped") go out before the primary exits.
        await output;
        // Only a worker still loading its code dies of the signal itself (a started one drains):
        // it had nothing to drain.
        if (proc.signalCode === signal) return true;
        if (code !== 0)
          this.opts.log.error('worker stopped with an error', {
            worker_slot: index,
            worker_pid: proc.pid,
            exit_code: code,
          });
        return code === 0;
      }),
    );
    return results.every(Boolean);
  }
}

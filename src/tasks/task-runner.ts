import type { CustomVoiceLookup } from '../resources/custom-voices.repository.ts';
import * as v from 'valibot';
import { recordFallback } from '../observability/metrics.ts';
import type { JobStep, MediaJob } from '../../providers/types.ts';
import { isFinalOutputFailure } from './output-failures.ts';
import { toUnits } from '../accounts/money.ts';
import type { Db } from '../db/database.ts';
import type { Logger } from '../ops/logger.ts';
import { errorFields } from '../ops/logger.ts';
import { ClaimLoop } from '../ops/claim-loop.ts';
import { formatIssues } from '../http/validation.ts';
import type { MediaRegistry, ResolvedMediaModel } from './media-registry.ts';
import { fallBack } from './task-fallback.ts';
import { finishTask, type Ending } from './task-finish.ts';
import {
  type ClaimedTask,
  claimDueTasks,
  dropTaskLeases,
  releaseTask,
  renewTaskLease,
} from './task-queue.repository.ts';
import { outputObject } from './task-output.ts';
import { discardTaskOutputs, type KeptOutput, keepTaskOutputs, type OutputStore } from './keep-task-outputs.ts';
import { observeTaskStep, taskFinished } from '../observability/task-observer.ts';

export interface TaskRunnerOptions {
  instanceId: string;
  concurrency: number;
  /** How long a claimed task stays this instance's without a heartbeat. */
  leaseMs: number;
  /** How often to look for due work when nothing woke the runner. */
  idleMs?: number;
  /** A job running longer than this fails, unless its model says otherwise. */
  defaultDeadlineMs?: number;
  /** A model's fallbacks, tried when its upstream refuses or fails a job (docs/routing.md). */
  fallbacks?: (modelId: string) => readonly string[];
  /** The accounts' custom voices, for the `validate` hooks of fallback models. */
  customVoices?: CustomVoiceLookup;
  /** The account's balance moved outside a finish (a fallback re-priced the task). */
  onBalanceMoved?: (accountId: number) => void;
  /** How long `stop` waits for running steps before aborting them (`STOP_GRACE_MS`). */
  stopGraceMs?: number;
}

const RETRY_MAX_MS = 30_000;
/**
 * At shutdown, how long running steps may take to end on their own. A step that is submitting a
 * job upstream must get to store the job's id: aborted after the upstream made the job, the task
 * would be submitted again by whichever instance takes it over (the provider paid twice, and
 * neither Replicate nor fal takes an idempotency key). Steps are one upstream call each.
 */
const STOP_GRACE_MS = 5_000;

/**
 * The durable queue of media tasks. Any instance claims due tasks with `FOR UPDATE SKIP LOCKED`
 * and a lease it renews while working; one claim runs one step (start, or poll of the stored
 * upstream `operation`) and then releases the task until its next poll. A killed instance's
 * leases expire and another instance (or itself, restarted) resumes from the task row.
 */
export class TaskRunner {
  private readonly loop: ClaimLoop<ClaimedTask>;
  private readonly inFlight = new Map<string, AbortController>();

  constructor(
    private readonly db: Db,
    private readonly registry: MediaRegistry,
    private readonly outputs: OutputStore,
    private readonly onFinished: (task: ClaimedTask, refunded: boolean) => void,
    private readonly log: Logger,
    private readonly opts: TaskRunnerOptions,
  ) {
    this.loop = new ClaimLoop({
      name: 'task',
      concurrency: opts.concurrency,
      idleMs: opts.idleMs,
      claim: (limit) => this.claim(limit),
      run: (task) => this.run(task),
      log,
    });
  }

  start(): void {
    this.loop.start();
  }

  /** New work was created here: look now instead of at the next idle tick. */
  wake(): void {
    this.loop.wake();
  }

  /**
   * Due tasks, leased to this instance. A task whose lease ran out while this instance's step
   * for it still runs (its heartbeat could not reach the database) comes back to the same
   * owner: the claim renewed the lease, and the step under way goes on with it, alone. A second
   * step would submit the job upstream again, or finish the task twice over.
   */
  private async claim(limit: number): Promise<ClaimedTask[]> {
    const claimed = await claimDueTasks(this.db, this.opts.instanceId, this.opts.leaseMs, limit);
    return claimed.filter((task) => !this.inFlight.has(task.id));
  }

  private async run(task: ClaimedTask): Promise<void> {
    const abort = new AbortController();
    this.inFlight.set(task.id, abort);
    const heartbeat = setInterval(() => void this.renewLease(task.id), Math.max(250, this.opts.leaseMs / 3));
    try {
      await observeTaskStep(task, () => this.withinDeadline(task, abort.signal));
    } catch (err) {
      // Aborted by `stop`, which hands the task back itself.
      if (abort.signal.aborted) return;
      // A transient failure (upstream down, storage hiccup): try the same step again later.
      const delay = Math.min(RETRY_MAX_MS, 500 * 2 ** Math.min(task.attempts, 6));
      this.log.warn('task step failed; will retry', { task_id: task.id, retry_in_ms: delay, ...errorFields(err) });
      await this.release(task.id, { runAfterMs: delay });
    } finally {
      clearInterval(heartbeat);
      this.inFlight.delete(task.id);
    }
  }

  /**
   * The step, ended at the task's deadline whatever the upstream does: an answer whose body
   * stalled after its headers held the task (and a runner slot) past it for good.
   */
  private async withinDeadline(task: ClaimedTask, signal: AbortSignal): Promise<void> {
    const model = this.registry.get(task.model);
    if (!model) return this.finish(task, { status: 'failed', message: `model ${task.model} is no longer available` });
    const deadline = task.created_at.getTime() + (model.media.deadlineMs ?? this.opts.defaultDeadlineMs ?? 30 * 60_000);
    const late = new AbortController();
    // A timer cleared with the step (AbortSignal.timeout's would stay pending until the deadline, one per poll).
    const timer = setTimeout(
      () => late.abort(new Error('the task did not finish in time')),
      // setTimeout fires at once past 2^31 − 1 ms (24.8 days): a later deadline waits that long.
      Math.min(2_147_483_647, Math.max(1, deadline - Date.now())),
    );
    try {
      return await this.step(task, model, signal, deadline, late.signal);
    } finally {
      clearTimeout(timer);
    }
  }

  private async step(
    task: ClaimedTask,
    model: ResolvedMediaModel,
    signal: AbortSignal,
    deadline: number,
    late: AbortSignal,
  ): Promise<void> {
    const parsed = v.safeParse(model.media.schema, task.input);
    if (!parsed.success)
      return this.finish(task, { status: 'failed', message: `input no longer valid: ${formatIssues(parsed.issues)}` });
    const job: MediaJob = {
      taskId: task.id,
      model: model.ref,
      input: parsed.output,
      signal: AbortSignal.any([signal, late]),
    };
    const outOfTime = async () => {
      if (task.operation !== null)
        await model.media.cancel?.({ ...job, signal }, task.operation).catch(() => undefined);
      return this.finish(task, { status: 'failed', message: 'the task did not finish in time' });
    };
    if (Date.now() > deadline) return outOfTime();

    let next: JobStep;
    try {
      next = task.operation === null ? await model.media.start(job) : await model.media.poll(job, task.operation);
    } catch (err) {
      if (late.aborted && !signal.aborted) return outOfTime();
      throw err;
    }
    switch (next.state) {
      case 'running':
        return this.release(task.id, { operation: next.operation ?? {}, runAfterMs: Math.max(0, next.pollAfterMs) });
      case 'failed':
        if (await this.fellBack(task, next.message)) return;
        return this.finish(task, { status: 'failed', message: next.message, detail: next.detail });
      case 'succeeded': {
        let files: KeptOutput[];
        try {
          files = await keepTaskOutputs(
            this.outputs,
            { id: task.id, accountId: task.account_id },
            next.outputs,
            job.signal,
          );
        } catch (err) {
          if (late.aborted && !signal.aborted) return outOfTime();
          // A URL that refuses for good, or outputs a model made in this very step (no operation
          // to poll again: a retry would generate, and be billed, anew): the task fails, refunded.
          if (isFinalOutputFailure(err) || (task.operation === null && !signal.aborted))
            return this.finish(task, {
              status: 'failed',
              message: `the output could not be stored: ${(err as Error).message}`,
            });
          throw err;
        }
        const final = model.media.finalPrice?.(parsed.output, next.outputs) ?? model.media.price(parsed.output);
        const done = await this.finished(task, {
          status: 'completed',
          output: outputObject(files),
          final: toUnits(final),
        });
        // Finished elsewhere meanwhile (cancelled): no task names these files. A finish that threw
        // keeps them, since its commit may have landed.
        if (!done) await discardTaskOutputs(this.outputs, files);
        return;
      }
      default: {
        const exhaustive: never = next;
        throw new Error(`unknown job step ${JSON.stringify(exhaustive)}`);
      }
    }
  }

  /** Moves the task to its next fallback model, if it has one left; it then starts afresh. */
  private async fellBack(task: ClaimedTask, message: string): Promise<boolean> {
    if (!this.opts.fallbacks) return false;
    const outcome = await fallBack(
      this.db,
      this.registry,
      this.opts.fallbacks,
      task,
      this.opts.instanceId,
      message,
      this.opts.customVoices,
    );
    if (!outcome.switched) return false;
    recordFallback(task.model, outcome.model);
    this.log.info('task falls back to another model', { task_id: task.id, from: task.model, to: outcome.model });
    if (outcome.moneyMoved) this.opts.onBalanceMoved?.(task.account_id);
    this.loop.wake();
    return true;
  }

  private async finish(task: ClaimedTask, ending: Ending): Promise<void> {
    await this.finished(task, ending);
  }

  /** Finishes the task; false when it was finished elsewhere meanwhile (cancelled, taken over). */
  private async finished(task: ClaimedTask, ending: Ending): Promise<boolean> {
    const done = await this.db.transaction().execute((trx) => finishTask(trx, task, this.opts.instanceId, ending));
    if (!done) {
      this.log.warn('task was finished elsewhere', { task_id: task.id });
      return false;
    }
    taskFinished(task, ending);
    this.onFinished(task, done.refunded);
    return true;
  }

  /** Hands the task back to the queue, due in `runAfterMs`; this instance looks for it then. */
  private async release(taskId: string, next: { operation?: unknown; runAfterMs: number }): Promise<void> {
    await releaseTask(this.db, taskId, this.opts.instanceId, next);
    this.loop.wakeAt(next.runAfterMs);
  }

  private async renewLease(taskId: string): Promise<void> {
    await renewTaskLease(this.db, taskId, this.opts.instanceId, this.opts.leaseMs).catch((err: unknown) =>
      this.log.warn('lease renewal failed', { task_id: taskId, ...errorFields(err) }),
    );
  }

  /**
   * Stops claiming, lets running steps end on their own for up to `STOP_GRACE_MS` (each then
   * hands its task back as ever, with what it learnt), aborts those still running and hands
   * their tasks back at once for any instance.
   */
  async stop(): Promise<void> {
    this.loop.stop();
    // Tasks a claim under way hands over are dropped with the rest, not started after the database closes.
    await this.loop.settled();
    const deadline = Date.now() + (this.opts.stopGraceMs ?? STOP_GRACE_MS);
    while (this.inFlight.size > 0 && Date.now() < deadline) await Bun.sleep(20);
    const ids = [...this.inFlight.keys()];
    for (const abort of this.inFlight.values()) abort.abort(new Error('instance stopping'));
    await dropTaskLeases(this.db, ids, this.opts.instanceId);
  }
}

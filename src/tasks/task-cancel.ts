import * as v from 'valibot';
import type { TranslationWarning } from '../../translators/canonical/warnings.ts';
import { refundKeySpend } from '../keys/api-keys.repository.ts';
import { applyLedgerMovement } from '../accounts/ledger.repository.ts';
import { toUnits } from '../accounts/money.ts';
import type { Db } from '../db/database.ts';
import { conflict, notFound } from '../http/errors.ts';
import type { Logger } from '../ops/logger.ts';
import { errorFields } from '../ops/logger.ts';
import { scheduleDelivery } from '../webhooks/deliveries.repository.ts';
import type { MediaRegistry } from './media-registry.ts';
import {
  type CancellableTask,
  lockTaskForCancel,
  markTaskCancelled,
  readCancelledOperation,
} from './task-cancel.repository.ts';
import { cancelledPayload } from './task-output.ts';
import { isTaskId } from './tasks.repository.ts';

/** How long the upstream gets to acknowledge a cancel before the answer goes out without it. */
const UPSTREAM_CANCEL_TIMEOUT_MS = 10_000;
/** How long a cancel waits for a step submitting the upstream job to store its handle. */
const SUBMISSION_WAIT_MS = 60_000;
const SUBMISSION_POLL_MS = 200;

/**
 * `POST /v1/tasks/{id}/cancel` (docs/api-contract.md, "Cancelling a task"). In one transaction,
 * under the task's row lock: the task leaves `processing` as `cancelled` with cost 0, its whole
 * charge is refunded, and its `cancelled` webhook is scheduled. The runner's finish takes the
 * same lock and is conditioned on `processing`, so a task racing to completion ends in exactly
 * one state and is charged (or refunded) exactly once. After the commit the upstream job is
 * cancelled where the provider can; where it cannot, the answer says so in `x-gateway-warnings`.
 */
export class TaskCanceller {
  constructor(
    private readonly db: Db,
    private readonly registry: MediaRegistry,
    /** After the commit: balances, webhooks and live subscribers learn of it. */
    private readonly onCancelled: (task: CancellableTask) => void,
    private readonly log: Logger,
  ) {}

  async cancel(accountId: number, taskId: string): Promise<{ warnings: TranslationWarning[] }> {
    if (!isTaskId(taskId)) throw notFound(`task ${taskId} not found`);
    const task = await this.db.transaction().execute(async (trx) => {
      const row = await lockTaskForCancel(trx, accountId, taskId);
      if (!row) throw notFound(`task ${taskId} not found`);
      if (row.status !== 'processing' || row.category === 'llm' || !(await markTaskCancelled(trx, row.id)))
        throw conflict(`task ${taskId} has already finished (${row.status}); only a processing task can be cancelled`);
      const charged = toUnits(row.cost_usd);
      if (charged > 0n)
        await applyLedgerMovement(trx, {
          accountId,
          amount: charged,
          kind: 'refund',
          taskId: row.id,
          category: row.category,
          note: 'cancelled task',
        });
      // The key that made the task gets its spend back too (docs/keys.md).
      await refundKeySpend(trx, row.id, charged);
      if (row.callback_url)
        await scheduleDelivery(trx, {
          taskId: row.id,
          attemptNo: 1,
          trigger: 'auto',
          payload: cancelledPayload(row.id),
        });
      return row;
    });
    this.onCancelled(task);
    return { warnings: await this.cancelUpstream(task) };
  }

  /** Best effort: the task is already cancelled and refunded whatever the upstream says. */
  private async cancelUpstream(task: CancellableTask): Promise<TranslationWarning[]> {
    const provider = task.model.split('/')[0];
    if (task.operation !== null) return this.cancelJob(task, task.operation);
    // No upstream job yet, unless a step is submitting it right now: its handle is stored when
    // the call returns, and the job is cancelled then.
    if (!task.leased) return [];
    void this.cancelOnceSubmitted(task);
    return [
      warning(
        `a call to ${provider} was in flight: the job it starts is cancelled upstream when the call returns, where ${provider} can`,
      ),
    ];
  }

  /** Waits (in the background) for the in-flight step to store its upstream handle, then cancels that job. */
  private async cancelOnceSubmitted(task: CancellableTask): Promise<void> {
    const deadline = Date.now() + SUBMISSION_WAIT_MS;
    try {
      while (Date.now() < deadline) {
        await Bun.sleep(SUBMISSION_POLL_MS);
        const now = await readCancelledOperation(this.db, task.id);
        if (!now) return;
        if (now.operation !== null) {
          await this.cancelJob(task, now.operation);
          return;
        }
        // The step ended without an upstream job (a synchronous model, or a failed submission).
        if (!now.leased) return;
      }
    } catch (err) {
      this.log.warn('upstream cancel after submission failed', { task_id: task.id, ...errorFields(err) });
    }
  }

  private async cancelJob(task: CancellableTask, operation: unknown): Promise<TranslationWarning[]> {
    const provider = task.model.split('/')[0];
    const model = this.registry.get(task.model);
    if (!model?.media.cancel)
      return [
        warning(`${provider} cannot cancel a running job: it runs to its end upstream and its result is dropped`),
      ];
    const parsed = v.safeParse(model.media.schema, task.input);
    const input = parsed.success ? parsed.output : {};
    const signal = AbortSignal.timeout(UPSTREAM_CANCEL_TIMEOUT_MS);
    try {
      await model.media.cancel({ taskId: task.id, model: model.ref, input, signal }, operation);
      return [];
    } catch (err) {
      this.log.warn('upstream cancel failed', { task_id: task.id, ...errorFields(err) });
      return [warning(`${provider} did not confirm the cancel: ${(err as Error).message}`)];
    }
  }
}

const warning = (message: string): TranslationWarning => ({ type: 'other', field: 'upstream', message });

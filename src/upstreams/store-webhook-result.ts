import type { Db } from '../db/database.ts';
import type { Logger } from '../ops/logger.ts';
import { errorFields } from '../ops/logger.ts';
import { type StoreOutcome, storeUpstreamResult } from '../tasks/task-queue.repository.ts';

/** How long a result waits for a step in flight to hand its task back. */
const WAIT_FOR_LEASE_MS = 60_000;
const RETRY_EVERY_MS = 100;

/**
 * The webhook answers at once; the verified result is stored on the task for its next poll, which
 * finishes it through the one path that finishes tasks (once, with money and callbacks). When a
 * step is working on the task right now the result is stored as soon as that step hands the task
 * back (a poll in flight), or not at all when that step finishes the task (it saw the same end).
 * Duplicate webhooks store the same result again, or find the task finished: both harmless.
 */
export function storeWhenFree(
  db: Db,
  log: Logger,
  providerId: string,
  taskId: string,
  operationId: string,
  result: unknown,
): Promise<StoreOutcome> {
  const deadline = Date.now() + WAIT_FOR_LEASE_MS;
  const attempt = async (): Promise<StoreOutcome> => {
    for (;;) {
      const outcome = await storeUpstreamResult(db, providerId, taskId, operationId, result);
      if (outcome !== 'busy' || Date.now() > deadline) return outcome;
      await Bun.sleep(RETRY_EVERY_MS);
    }
  };
  return attempt().catch((err: unknown) => {
    log.warn('upstream webhook result not stored; the next poll will find it', {
      task_id: taskId,
      ...errorFields(err),
    });
    return 'busy' as const;
  });
}

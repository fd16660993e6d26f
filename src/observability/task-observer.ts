import type { ObservedAttempt } from '../../providers/common/upstream-observer.ts';
import { withUpstreamScope } from '../../providers/common/upstream-observer.ts';
import { minUnits, toUnits, unitsToUsd } from '../accounts/money.ts';
import type { Ending } from '../tasks/task-finish.ts';
import type { ClaimedTask } from '../tasks/task-queue.repository.ts';
import { costUsd, tasks, upstreamRequestDuration } from './metrics.ts';
import { endAttemptSpan, type Span, tracing } from './tracing.ts';

/**
 * One step of a media task (start, or a poll) as a span `task <model>`, with each upstream
 * attempt inside it as a client span; every attempt carries the create call's `x-request-id`.
 */
export async function observeTaskStep<T>(task: ClaimedTask, run: () => Promise<T>): Promise<T> {
  const t = tracing();
  const span = t?.childSpan(`task ${task.model}`, 'internal', undefined, {
    'gateway.task.id': task.id,
    'gateway.model': task.model,
    'gateway.task.attempt': task.attempts,
    ...(task.request_id ? { 'gateway.request_id': task.request_id } : {}),
  });
  const scope = { attempt: (method: string, url: string) => attempt(task, span, method, url) };
  try {
    return await withUpstreamScope(scope, run);
  } catch (err) {
    if (span && t) t.fail(span, err instanceof Error ? err.name : 'error');
    throw err;
  } finally {
    span?.end();
  }
}

function attempt(task: ClaimedTask, parent: Span | undefined, method: string, url: string): ObservedAttempt {
  const started = performance.now();
  const t = tracing();
  const span = t?.childSpan(method, 'client', parent, {
    'http.request.method': method,
    'server.address': URL.parse(url)?.hostname ?? '',
    'gateway.provider': task.provider,
  });
  const headers: Record<string, string> = task.request_id ? { 'x-request-id': task.request_id } : {};
  if (span && t) Object.assign(headers, t.propagation(span));
  return {
    headers,
    end(result) {
      upstreamRequestDuration.observe({ provider: task.provider }, (performance.now() - started) / 1000);
      if (span && t) endAttemptSpan(t, span, result);
    },
  };
}

/** A task finished here: count it by status, and what it finally cost (a failed task costs nothing). */
export function taskFinished(task: ClaimedTask, ending: Ending): void {
  tasks.inc({ model: task.model, status: ending.status });
  if (ending.status !== 'completed') return;
  const cost = unitsToUsd(minUnits(ending.final, toUnits(task.cost_usd)));
  if (cost > 0) costUsd.inc({ model: task.model, category: task.category ?? 'unknown' }, cost);
}

import { toUnits, unitsToUsd } from '../accounts/money.ts';
import type { Catalog } from '../catalog/catalog.ts';
import type { CallbackAttemptRow } from '../db/tables/callbacks.table.ts';
import type { TaskRow } from '../db/tables/tasks.table.ts';

const unix = (date: Date) => Math.floor(date.getTime() / 1000);

/** A callback log entry as the API contract shows it. */
export const attemptView = (row: Pick<CallbackAttemptRow, 'sent_at' | 'status' | 'status_text'>) => ({
  sent_at: unix(row.sent_at),
  status: row.status,
  status_text: row.status_text,
});

/**
 * The API contract's task record. `category` is null once the model has left the catalog; `output` is
 * null until completed; `callback_result` is null without a callback URL; `error_message` is
 * present only on failure; `request_id` when the task was made by a request. `error_detail` (provider diagnostics) is never shown.
 */
export function taskView(row: TaskRow, attempts: CallbackAttemptRow[], catalog: Catalog) {
  return {
    task_id: row.id,
    model: row.model,
    category: catalog.get(row.model)?.object.category ?? null,
    status: row.status,
    cost: unitsToUsd(toUnits(row.cost_usd)),
    /** The API key that created it (docs/keys.md); null for tasks older than per-key records. */
    key_id: row.key_id ?? null,
    created_at: unix(row.created_at),
    input: row.input ?? {},
    output: row.status === 'completed' ? (row.output ?? null) : null,
    callback_url: row.callback_url,
    callback_result: row.callback_url ? attempts.map(attemptView) : null,
    ...(row.status === 'failed' ? { error_message: row.error_message ?? 'task failed' } : {}),
    ...(Array.isArray(row.route_attempts) && row.route_attempts.length ? { attempts: row.route_attempts } : {}),
    // The `x-request-id` of the call that made the task, to find its log lines and trace.
    ...(row.request_id ? { request_id: row.request_id } : {}),
  };
}

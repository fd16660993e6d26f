import type { ClaimedDelivery } from '../webhooks/deliveries.repository.ts';
import { delivered } from '../webhooks/delivery-policy.ts';
import type { DeliveryResult } from '../webhooks/delivery-results.ts';
import { webhookDeliveries } from './metrics.ts';
import { tracing } from './tracing.ts';

/** What a delivery attempt came to: `delivered` (2xx), `failed` (another answer), `error` (no answer). */
export type DeliveryOutcome = 'delivered' | 'failed' | 'error';

export function deliveryOutcome(status: number): DeliveryOutcome {
  if (status === 0) return 'error';
  return delivered(status) ? 'delivered' : 'failed';
}

/** One webhook delivery attempt: counted by outcome, and a client span `webhook <attempt>` when tracing. */
export async function observeDelivery(
  delivery: ClaimedDelivery,
  send: () => Promise<DeliveryResult>,
): Promise<DeliveryResult> {
  const t = tracing();
  const span = t?.childSpan('webhook delivery', 'client', undefined, {
    'http.request.method': 'POST',
    'server.address': delivery.callback_url ? (URL.parse(delivery.callback_url)?.hostname ?? '') : '',
    'gateway.task.id': delivery.task_id,
    'gateway.webhook.attempt': delivery.attempt_no,
    'gateway.webhook.trigger': delivery.trigger,
  });
  const result = await send();
  const outcome = deliveryOutcome(result.status);
  webhookDeliveries.inc({ outcome });
  if (span && t) {
    if (result.status > 0) span.setAttribute('http.response.status_code', result.status);
    span.setAttribute('gateway.outcome', outcome);
    if (outcome !== 'delivered') t.fail(span, outcome === 'error' ? 'no_answer' : String(result.status));
    span.end();
  }
  return result;
}

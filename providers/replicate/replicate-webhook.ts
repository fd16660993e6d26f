import type { UpstreamWebhook } from '../types.ts';
import { isPrediction, TERMINAL, trimPrediction } from './replicate-prediction.ts';
import type { ReplicateSettings } from './replicate-settings.ts';
import { MAX_UPSTREAM_JSON_DEPTH } from '../common/upstream-request.ts';
import { jsonTextTooDeep } from '../../translators/common/json-text-depth.ts';
import { verifyWebhook } from './replicate-signature.ts';

/**
 * Replicate's `completed` webhook: the prediction object as `GET /predictions/{id}` returns it,
 * signed (replicate-signature.ts). The task is named by the `task` query parameter the gateway
 * put in the webhook URL; the prediction id must match the task's own, so a valid signature for
 * one task cannot finish another.
 * @see https://replicate.com/docs/topics/webhooks/receive-webhook
 */
export function replicateWebhook(settings: ReplicateSettings): UpstreamWebhook {
  return {
    async receive({ url, headers, body }) {
      if (!settings.webhookSecret)
        return {
          accepted: false,
          status: 401,
          message: 'webhooks are not configured for this provider (options.webhook_secret)',
        };
      const check = verifyWebhook(settings.webhookSecret, headers, body);
      if (!check.ok) return { accepted: false, status: 401, message: `invalid webhook signature: ${check.reason}` };
      const taskId = url.searchParams.get('task');
      if (!taskId) return { accepted: false, status: 400, message: 'the webhook URL names no task' };
      if (jsonTextTooDeep(body, MAX_UPSTREAM_JSON_DEPTH))
        return {
          accepted: false,
          status: 400,
          message: `the webhook body nests deeper than ${MAX_UPSTREAM_JSON_DEPTH} levels`,
        };
      let prediction: unknown;
      try {
        prediction = JSON.parse(body);
      } catch {
        return { accepted: false, status: 400, message: 'the webhook body is not JSON' };
      }
      if (!isPrediction(prediction))
        return { accepted: false, status: 400, message: 'the webhook body is not a prediction' };
      if (!TERMINAL.has(prediction.status)) return { accepted: true, ignored: `prediction is ${prediction.status}` };
      return { accepted: true, taskId, operationId: prediction.id, result: trimPrediction(prediction) };
    },
  };
}

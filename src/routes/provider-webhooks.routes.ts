import { Elysia } from 'elysia';
import type { AppContext } from '../app/context.ts';
import { EnvelopeError, notFound } from '../http/errors.ts';
import { envelope } from '../http/envelope.ts';
import { readBodyText } from '../http/request-body.ts';
import type { Provider } from '../../providers/types.ts';
import { storeWhenFree } from '../upstreams/store-webhook-result.ts';

/** Larger bodies are no completion webhook of ours (a prediction without its input is small). */
const MAX_BODY_BYTES = 1024 * 1024;
/** How long the answer waits for a step in flight before answering (the store carries on). */
const ANSWER_WITHIN_MS = 2_000;

/**
 * `POST /upstream-webhooks/<provider id>?task=<task id>`: upstreams (Replicate) report finished
 * jobs here. No API key: the provider's adapter verifies the upstream's own signature over the
 * raw body (401 when it does not match, and nothing is stored). A verified result is stored on
 * the task for its next poll step, which finishes the task (src/upstreams/store-webhook-result.ts);
 * `wakeRunner` has this instance's runner look for it at once rather than after its idle wait.
 */
export function providerWebhookRoutes(
  ctx: AppContext,
  providers: ReadonlyMap<string, Provider>,
  wakeRunner: () => void,
) {
  return new Elysia({ name: 'provider-webhooks' }).post(
    '/upstream-webhooks/:provider_id',
    async ({ params, request }) => {
      const webhook = providers.get(params.provider_id)?.media?.webhook;
      if (!webhook) throw notFound(`provider ${params.provider_id} takes no webhooks`);
      // Read under the cap as it streams in (a chunked body is cut at the cap, not buffered whole).
      const body = await readBodyText(request, { maxBytes: MAX_BODY_BYTES, timeoutMs: ctx.env.bodyTimeoutMs });
      const outcome = await webhook.receive({ url: new URL(request.url), headers: request.headers, body });
      if (!outcome.accepted) {
        ctx.log.warn('upstream webhook refused', {
          provider: params.provider_id,
          status: outcome.status,
          reason: outcome.message,
        });
        throw new EnvelopeError(outcome.status, outcome.message);
      }
      if ('ignored' in outcome) return envelope({ received: true, stored: false, reason: outcome.ignored });
      const storing = storeWhenFree(
        ctx.db,
        ctx.log,
        params.provider_id,
        outcome.taskId,
        outcome.operationId,
        outcome.result,
      ).then((stored) => {
        if (stored === 'stored') wakeRunner();
        return stored;
      });
      const answer = await Promise.race([storing, Bun.sleep(ANSWER_WITHIN_MS).then(() => 'pending' as const)]);
      ctx.log.info('upstream webhook received', {
        provider: params.provider_id,
        task_id: outcome.taskId,
        outcome: answer,
      });
      return envelope({ received: true, stored: answer === 'stored' || answer === 'pending', outcome: answer });
    },
    { parse: 'none' },
  );
}

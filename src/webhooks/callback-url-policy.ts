import { checkUrl } from '../net/address-guard.ts';
import { UnsafeUrlError } from '../net/net-errors.ts';
import { safeFetch } from '../net/safe-fetch.ts';
import type { SendWebhook } from './webhook-deliverer.ts';

/** How long a delivery may take: receivers are advised to answer within 5 s; we wait 10. */
const WEBHOOK_TIMEOUT_MS = 10_000;
/** A receiver's answer is only logged by its status: its body is read up to this much, then dropped. */
const WEBHOOK_ANSWER_MAX_BYTES = 64 * 1024;

/**
 * Where a task's `callback_url` may point, checked twice: at creation (a refused host is a 422;
 * a name that does not resolve right now is accepted, since a DNS hiccup must not fail the task)
 * and again at every send, which is the check that counts (DNS may have changed since).
 */
export function checkCallbackUrlAtCreation(allowPrivate: boolean) {
  return async (url: string): Promise<void> => {
    try {
      await checkUrl(url, { allowPrivate, field: 'callback_url' });
    } catch (err) {
      if (!(err instanceof UnsafeUrlError && err.reason === 'unresolvable')) throw err;
    }
  };
}

/** One delivery POST: private targets refused at send time, no redirects followed, time- and size-limited. */
export function sendWebhook(allowPrivate: boolean): SendWebhook {
  return async (url, body, headers) => {
    const res = await safeFetch(
      url,
      { method: 'POST', body, headers },
      {
        allowPrivate,
        field: 'callback_url',
        timeoutMs: WEBHOOK_TIMEOUT_MS,
        followRedirects: false,
        maxBytes: WEBHOOK_ANSWER_MAX_BYTES,
      },
    );
    await res.body?.cancel().catch(() => undefined);
    return { status: res.status, statusText: res.statusText || String(res.status) };
  };
}

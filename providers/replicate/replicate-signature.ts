import { createHmac, timingSafeEqual } from 'node:crypto';

/** How far a webhook's timestamp may be from our clock (replay protection). */
export const TIMESTAMP_TOLERANCE_S = 5 * 60;

export type SignatureCheck = { ok: true } | { ok: false; reason: string };

/** The HMAC key of a `whsec_…` signing secret: the base64 after the prefix. */
function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
}

/** `v1,<base64>` for the signed content `<id>.<timestamp>.<body>`. */
export function signWebhook(secret: string, id: string, timestamp: string, body: string): string {
  return `v1,${createHmac('sha256', keyOf(secret)).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/**
 * Replicate signs every webhook: HMAC-SHA256 with the account's `whsec_` key over
 * `webhook-id.webhook-timestamp.body`, base64, listed (space-separated, `v1,` prefixed) in
 * `webhook-signature`. Any one listed signature may match; compared in constant time.
 * @see https://replicate.com/docs/topics/webhooks/verify-webhook
 */
export function verifyWebhook(secret: string, headers: Headers, body: string, nowMs = Date.now()): SignatureCheck {
  const id = headers.get('webhook-id');
  const timestamp = headers.get('webhook-timestamp');
  const signatures = headers.get('webhook-signature');
  if (!id || !timestamp || !signatures)
    return { ok: false, reason: 'missing webhook-id, webhook-timestamp or webhook-signature' };
  if (!/^\d+$/.test(timestamp)) return { ok: false, reason: 'webhook-timestamp is not a number of seconds' };
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > TIMESTAMP_TOLERANCE_S)
    return { ok: false, reason: 'webhook-timestamp is too far from now' };
  const expected = Buffer.from(signWebhook(secret, id, timestamp, body).slice(3), 'base64');
  for (const entry of signatures.split(' ')) {
    const [version, value] = entry.split(',', 2);
    if (version !== 'v1' || !value) continue;
    const given = Buffer.from(value, 'base64');
    if (given.length === expected.length && timingSafeEqual(given, expected)) return { ok: true };
  }
  return { ok: false, reason: 'no matching signature' };
}

/**
 * Two signatures on every signed delivery (docs/webhooks.md, "Signing"):
 * - the gateway's own: `x-webhook-signature`, the lowercase hex HMAC-SHA256, keyed with the
 *   account's secret (its 64 hex characters as text), of `${timestamp}.${rawBody}`, with
 *   `x-webhook-timestamp` in Unix seconds;
 * - Standard Webhooks: `webhook-signature: v1,<base64 HMAC-SHA256>`, keyed with the secret's 32
 *   bytes, of `${webhook-id}.${webhook-timestamp}.${rawBody}`, so receivers can verify with the
 *   `standardwebhooks` libraries given `standard_secret` (`whsec_` + base64 of those bytes).
 * `webhook-id` and `webhook-timestamp` go on every delivery, signed or not.
 * @see https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md
 */
export function signWebhook(secret: string, timestamp: number, rawBody: string): string {
  return new Bun.CryptoHasher('sha256', secret).update(`${timestamp}.${rawBody}`).digest('hex');
}

/** The secret's bytes: it is 64 hex characters (src/routes/account.routes.ts makes it). */
const secretBytes = (secret: string) => Buffer.from(secret, 'hex');

export function standardSignature(secret: string, messageId: string, timestamp: number, rawBody: string): string {
  const mac = new Bun.CryptoHasher('sha256', secretBytes(secret))
    .update(`${messageId}.${timestamp}.${rawBody}`)
    .digest('base64');
  return `v1,${mac}`;
}

/** The same secret in the Standard Webhooks form the libraries take. */
export const standardSecret = (secret: string) => `whsec_${secretBytes(secret).toString('base64')}`;

/**
 * A task sends one event, its ending, so the task id names the message: every retry and manual
 * redelivery of it carries the same `webhook-id`, which receivers may deduplicate on.
 */
export const webhookMessageId = (taskId: string) => `msg_${taskId}`;

export function webhookHeaders(
  body: string,
  message: { id: string },
  signing: { enabled: boolean; secret: string | null },
  now = Date.now(),
): Record<string, string> {
  const timestamp = Math.floor(now / 1000);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'generation-gateway-webhooks/1',
    'webhook-id': message.id,
    'webhook-timestamp': String(timestamp),
  };
  if (signing.enabled && signing.secret) {
    headers['x-webhook-timestamp'] = String(timestamp);
    headers['x-webhook-signature'] = signWebhook(signing.secret, timestamp, body);
    headers['webhook-signature'] = standardSignature(signing.secret, message.id, timestamp, body);
  }
  return headers;
}

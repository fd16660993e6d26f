/**
 * docs/api-contract.md: `x-webhook-signature` is the lowercase hex HMAC-SHA256, keyed with the account's
 * secret, of `${timestamp}.${rawBody}`; `x-webhook-timestamp` is Unix seconds.
 */
export function signWebhook(secret: string, timestamp: number, rawBody: string): string {
  return new Bun.CryptoHasher('sha256', secret).update(`${timestamp}.${rawBody}`).digest('hex');
}

export function webhookHeaders(
  body: string,
  signing: { enabled: boolean; secret: string | null },
  now = Date.now(),
): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'generation-gateway-webhooks/1',
  };
  if (signing.enabled && signing.secret) {
    const timestamp = Math.floor(now / 1000);
    headers['x-webhook-timestamp'] = String(timestamp);
    headers['x-webhook-signature'] = signWebhook(signing.secret, timestamp, body);
  }
  return headers;
}

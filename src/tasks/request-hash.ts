import { canonicalJson } from '../ops/canonical-json.ts';

/** What an Idempotency-Key is bound to: the model, input and callback of the request. */
export function requestHash(parts: { model: string; input: unknown; callbackUrl?: string }): string {
  return new Bun.CryptoHasher('sha256')
    .update(canonicalJson({ model: parts.model, input: parts.input, callback_url: parts.callbackUrl ?? null }))
    .digest('hex');
}

/** JSON with object keys sorted, so the same body always hashes the same. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** What an Idempotency-Key is bound to: the model, input and callback of the request. */
export function requestHash(parts: { model: string; input: unknown; callbackUrl?: string }): string {
  return new Bun.CryptoHasher('sha256')
    .update(canonicalJson({ model: parts.model, input: parts.input, callback_url: parts.callbackUrl ?? null }))
    .digest('hex');
}

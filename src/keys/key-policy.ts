/**
 * What a key may do, as the request path checks it (docs/keys.md). Loaded with the key by the key
 * cache, so the per-call checks are in-memory; a changed key is dropped from every instance's
 * cache at once (src/auth/key-cache.ts).
 */
export interface KeyPolicy {
  /** Model ids, provider slugs or `slug/*`; null: every model. */
  models: readonly string[] | null;
  rpm: number | null;
  tpm: number | null;
  /** Unix milliseconds; null: never. */
  expiresAt: number | null;
  /** The key has a budget of its own: its LLM calls hold against it (src/keys/key-budgets.ts). */
  budgeted: boolean;
}

export const UNRESTRICTED: KeyPolicy = { models: null, rpm: null, tpm: null, expiresAt: null, budgeted: false };

/**
 * Whether `modelId` (`slug/name`) is on the list: an exact id, its provider slug (`slug`), or
 * `slug/*`. Linear in the list, which is at most 100 entries.
 */
export function modelAllowed(models: readonly string[] | null, modelId: string): boolean {
  if (models === null) return true;
  const slash = modelId.indexOf('/');
  const slug = slash < 0 ? modelId : modelId.slice(0, slash);
  for (const entry of models) {
    if (entry === modelId || entry === slug) return true;
    if (entry.length === slug.length + 2 && entry.endsWith('/*') && entry.startsWith(slug)) return true;
  }
  return false;
}

export const modelNotAllowedMessage = (modelId: string) =>
  `model_not_allowed: this API key may not use the model '${modelId}'`;
export const keyBudgetMessage = 'key_budget_exceeded: this call would take the API key past its budget';

/**
 * Whether the key is kept within limits of what it may do (docs/keys.md): a list of models, a
 * budget or an expiry. Its rates (`rpm`, `tpm`) shape its traffic and do not count.
 */
export function isLimited(policy: KeyPolicy | undefined): boolean {
  return !!policy && (policy.models !== null || policy.budgeted || policy.expiresAt !== null);
}

export const limitedKeyMessage =
  'key_limited: an API key with a model list, a budget or an expiry cannot manage API keys, rotate the account key or read the webhook secret; use a key without them';

/**
 * Adapter kinds a `GATEWAY_CONFIG` provider may name. Each kind is one folder in providers/;
 * the registry maps the kind to its factory (filled in as adapters land).
 */
export const PROVIDER_KINDS = ['sandbox', 'openai', 'anthropic'] as const;
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

export function isProviderKind(kind: string): kind is ProviderKind {
  return (PROVIDER_KINDS as readonly string[]).includes(kind);
}

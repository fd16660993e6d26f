import type { LlmAdapter } from '../../providers/types.ts';
import type { ClientFormat } from './client-format.ts';

/**
 * The client's request headers an upstream of the client's own API takes (`forwardedHeaders`,
 * e.g. Anthropic's `anthropic-beta` from a Messages client); undefined when there are none, which
 * is every call of another format: a chat client's headers mean nothing to Anthropic.
 */
export function forwardedHeaders(
  adapter: LlmAdapter,
  format: ClientFormat,
  headers: Headers,
): Record<string, string> | undefined {
  const forwarded = adapter.forwardedHeaders;
  if (!forwarded || forwarded.format !== format.name) return undefined;
  const picked: Record<string, string> = {};
  let any = false;
  for (const name of forwarded.names) {
    const value = headers.get(name);
    if (value === null) continue;
    picked[name] = value;
    any = true;
  }
  return any ? picked : undefined;
}

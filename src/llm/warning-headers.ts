import type { TranslationWarning } from '../../translators/canonical/index.ts';

/**
 * Lossy translations are never silent: what was dropped or changed is told to the client in one
 * header, as a JSON array of `{type, field, message}` (ASCII only, at most 4 KiB).
 */
export function warningHeaders(warnings: TranslationWarning[]): Record<string, string> {
  const ascii = (list: TranslationWarning[]) => JSON.stringify(list).replace(/[^\x20-\x7e]/g, '?');
  // Drop trailing warnings until the header fits; it always stays valid JSON.
  for (let kept = warnings; kept.length; kept = kept.slice(0, -1)) {
    const text = ascii(kept);
    if (text.length <= 4096) return { 'x-gateway-warnings': text };
  }
  return {};
}

import type { ReasoningPart } from '../canonical/request.ts';
import type { TranslationWarning } from '../canonical/warnings.ts';
import { asObject, asString } from '../common/validation.ts';
import type { ItemStatus, ResponsesReasoningItem } from './wire-types.ts';

/**
 * Reasoning ↔ Responses `reasoning` items. The visible text is the item's `reasoning_text`
 * content; what must go back upstream unchanged (an Anthropic signature or redacted data) rides
 * in `encrypted_content`, which Responses clients treat as opaque and send back as they got it:
 * `sig:<signature>` or `redacted:<data>`. Anything else there came from another service and
 * cannot be used (docs/protocol-mapping.md, "Reasoning").
 */
const SIGNATURE = 'sig:';
const REDACTED = 'redacted:';

export function encryptedContent(part: Pick<ReasoningPart, 'signature' | 'redacted'>): string | null {
  if (part.redacted !== undefined) return `${REDACTED}${part.redacted}`;
  if (part.signature !== undefined) return `${SIGNATURE}${part.signature}`;
  return null;
}

export function reasoningItem(
  id: string,
  text: string,
  encrypted: string | null,
  status: ItemStatus,
): ResponsesReasoningItem {
  return {
    type: 'reasoning',
    id,
    summary: [],
    content: text ? [{ type: 'reasoning_text', text }] : [],
    encrypted_content: encrypted,
    status,
  };
}

/**
 * A client's `reasoning` input item → a reasoning part; its text from `content` (or, failing
 * that, `summary`). An item with neither text nor usable encrypted content carries nothing: it is
 * left out with a warning (undefined).
 */
export function decodeReasoningItem(
  item: unknown,
  at: string,
  warnings: TranslationWarning[],
): ReasoningPart | undefined {
  const obj = asObject(item) ?? {};
  const texts = (list: unknown) =>
    Array.isArray(list) ? list.map((p) => asString(asObject(p)?.text) ?? '').join('') : '';
  const part: ReasoningPart = { type: 'reasoning', text: texts(obj.content) || texts(obj.summary) };
  const encrypted = asString(obj.encrypted_content);
  if (encrypted?.startsWith(SIGNATURE)) part.signature = encrypted.slice(SIGNATURE.length);
  else if (encrypted?.startsWith(REDACTED)) part.redacted = encrypted.slice(REDACTED.length);
  else if (encrypted)
    warnings.push({
      type: 'unsupported-content',
      field: `${at}.encrypted_content`,
      message: 'encrypted reasoning from another service cannot be used and was left out',
    });
  if (part.text || part.signature !== undefined || part.redacted !== undefined) return part;
  if (!encrypted)
    warnings.push({ type: 'unsupported-content', field: at, message: 'an empty reasoning item was left out' });
  return undefined;
}

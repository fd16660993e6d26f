import type { Db } from '../db/database.ts';
import { findOutputItem } from './llm-responses.repository.ts';

/**
 * Replaces `{type: 'item_reference', id}` input items with the stored items they name, so the
 * translator sees ordinary items. Unresolvable references are left for it to reject by name.
 */
export async function resolveItemReferences(db: Db, accountId: number, body: unknown): Promise<unknown> {
  if (!body || typeof body !== 'object') return body;
  const input = (body as { input?: unknown }).input;
  if (!Array.isArray(input) || !input.some(isReference)) return body;
  const resolved = await Promise.all(
    input.map(async (item: unknown) => {
      if (!isReference(item)) return item;
      return (await findOutputItem(db, accountId, item.id)) ?? item;
    }),
  );
  return { ...(body as object), input: resolved };
}

function isReference(item: unknown): item is { type: 'item_reference'; id: string } {
  return (
    !!item &&
    typeof item === 'object' &&
    (item as { type?: unknown }).type === 'item_reference' &&
    typeof (item as { id?: unknown }).id === 'string'
  );
}

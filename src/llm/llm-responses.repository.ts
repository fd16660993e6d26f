import { sql } from 'kysely';
import type { CanonicalMessage } from '../../translators/canonical/index.ts';
import type { Db } from '../db/database.ts';
import { isStorableString, storableString } from '../http/hostile-json.ts';

/**
 * Could `id` name a stored response or output item at all? Ids are ours (`resp_…`, `msg_…`):
 * short and plain. Anything else — NUL, an unpaired surrogate, no string, an absurd length — is
 * simply not found, without a query Postgres would refuse.
 */
const MAX_ID_LENGTH = 255;
function isLookupId(id: unknown): id is string {
  return typeof id === 'string' && id.length > 0 && id.length <= MAX_ID_LENGTH && isStorableString(id);
}

/**
 * Responses API state (`store: true`, the default): the whole conversation of each stored
 * response, so `previous_response_id` can continue it and `item_reference` can point into it.
 * Rows are per account; another account's id is as unknown as a made-up one.
 */
export interface StoredResponse {
  id: string;
  accountId: number;
  model: string;
  previousResponseId?: string;
  /** Conversation up to and including this response's output, without system messages. */
  messages: CanonicalMessage[];
  /** The wire output items (with their ids), for item references. */
  outputItems: unknown[];
  /** The response object exactly as the client received it. */
  response: unknown;
  /** A passed-through turn's conversation as its Responses upstream saw it, as JSON text (responses-conversation.ts). */
  wireItemsJson?: string;
}

/** A stored conversation: canonical, and as a Responses upstream saw it when it was passed through. */
export interface StoredConversation {
  messages: CanonicalMessage[];
  wireItems?: unknown[];
}

export async function saveResponse(db: Db, stored: StoredResponse): Promise<void> {
  await db
    .insertInto('llm_responses')
    .values({
      id: stored.id,
      account_id: stored.accountId,
      model: stored.model,
      previous_response_id: stored.previousResponseId === undefined ? null : storableString(stored.previousResponseId),
      messages: JSON.stringify(stored.messages),
      output_items: JSON.stringify(stored.outputItems),
      response: JSON.stringify(stored.response),
      wire_items: stored.wireItemsJson ?? null,
    })
    .execute();
}

export async function loadConversation(db: Db, accountId: number, id: string): Promise<StoredConversation | undefined> {
  if (!isLookupId(id)) return undefined;
  const row = await db
    .selectFrom('llm_responses')
    .select(['messages', 'wire_items'])
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  if (!row) return undefined;
  const messages = row.messages as CanonicalMessage[];
  return Array.isArray(row.wire_items) ? { messages, wireItems: row.wire_items } : { messages };
}

export async function loadResponse(db: Db, accountId: number, id: string): Promise<unknown> {
  if (!isLookupId(id)) return undefined;
  const row = await db
    .selectFrom('llm_responses')
    .select('response')
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return row?.response;
}

/** Finds a stored output item by its id (`msg_…`, `fc_…`) among the account's responses. */
export async function findOutputItem(db: Db, accountId: number, itemId: string): Promise<unknown> {
  if (!isLookupId(itemId)) return undefined;
  const row = await db
    .selectFrom('llm_responses')
    .select('output_items')
    .where('account_id', '=', accountId)
    .where(sql<boolean>`output_items @> ${JSON.stringify([{ id: itemId }])}::jsonb`)
    .executeTakeFirst();
  const items = (row?.output_items ?? []) as Array<{ id?: unknown }>;
  return items.find((item) => item.id === itemId);
}

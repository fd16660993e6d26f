import type { Selectable } from 'kysely';
import type { CreatedAt } from './accounts.table.ts';
import type { Json } from './tasks.table.ts';

/** Responses API state (`store: true`): what `previous_response_id` and `GET /v1/responses/{id}` read. */
export interface LlmResponsesTable {
  id: string;
  account_id: number;
  model: string;
  previous_response_id: string | null;
  /** The whole canonical conversation up to and including this response's output. */
  messages: Json;
  /** Wire output items, for `item_reference` look-ups. */
  output_items: Json;
  /** The wire response object as the client received it. */
  response: Json;
  /** A passed-through conversation as its Responses upstream saw it; null when translated (migration 0014). */
  wire_items: Json | null;
  created_at: CreatedAt;
}

export type LlmResponseRow = Selectable<LlmResponsesTable>;

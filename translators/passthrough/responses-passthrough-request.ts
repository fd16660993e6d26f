import type { CanonicalMessage } from '../canonical/request.ts';
import type { Translated } from '../canonical/warnings.ts';
import { encodeResponsesRequest } from '../responses/encode-request.ts';
import type { Json } from '../shared/validation.ts';

/**
 * A Responses client's body → the body for an upstream that speaks Responses too, with every
 * field the client sent kept as it is (reasoning, include, built-in tools, fields the gateway has
 * never heard of), except the conversation state, which the gateway keeps itself:
 *
 * - `store` is always false upstream: the gateway stores the response (when the client asked) in
 *   its own database, so `previous_response_id`, `item_reference` and `GET /v1/responses/{id}`
 *   work the same whatever provider answered;
 * - `previous_response_id` is resolved by the gateway: the stored conversation (`history`, without
 *   system messages) is encoded as input items ahead of the client's own input.
 *
 * `model` stays the gateway's id here; the provider swaps in its upstream model.
 */
export function responsesPassthroughRequest(body: Json, history: CanonicalMessage[]): Translated<Json> {
  const { previous_response_id: _resolved, ...rest } = body;
  const value: Json = { ...rest, store: false };
  if (!history.length) return { value, warnings: [] };
  const earlier = encodeResponsesRequest({ model: '', messages: history, stream: false }, '');
  const input = typeof body.input === 'string' ? [{ type: 'message', role: 'user', content: body.input }] : body.input;
  value.input = [...earlier.value.input, ...(Array.isArray(input) ? input : [])];
  return { value, warnings: earlier.warnings };
}

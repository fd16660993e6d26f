import type { CanonicalMessage } from '../canonical/request.ts';
import type { TranslationWarning } from '../canonical/warnings.ts';
import { encodeResponsesRequest } from '../responses/encode-request.ts';
import { asObject, isSet, type Json } from '../common/validation.ts';
import { responsesLeftOut } from './responses-canonical-view.ts';
import { perCallTools, serverRunTools } from './responses-tool-fees.ts';
import type { PassthroughRequest } from './uncounted-input.ts';
import { refuseResponsesStorage } from './upstream-files.ts';
import { withoutSettings } from './withheld-settings.ts';

/**
 * The client's input items as a stateless upstream can take them. Item ids (`msg_…`, `fc_…`,
 * `rs_…`) name items the upstream would look up in its own store, which holds nothing (it is
 * called with `store: false`), so an echoed id fails the call with "Item with id … not found":
 * ids are removed and the content kept. A reasoning item without `encrypted_content` is nothing
 * but such an id, so it is not sent, with a warning.
 * @see https://platform.openai.com/docs/guides/reasoning#encrypted-reasoning-items
 */
function statelessItems(input: unknown[], warnings: TranslationWarning[]): unknown[] {
  const items: unknown[] = [];
  input.forEach((item, i) => {
    const obj = asObject(item);
    if (obj?.type === 'reasoning' && !isSet(obj.encrypted_content)) {
      warnings.push({
        type: 'unsupported-content',
        field: `input[${i}]`,
        message:
          'a reasoning item without encrypted_content was not sent: the upstream stores nothing and cannot look it up; request include ["reasoning.encrypted_content"] to carry reasoning across turns',
      });
      return;
    }
    if (!obj || !('id' in obj)) {
      items.push(item);
      return;
    }
    const { id: _id, ...rest } = obj;
    items.push(rest);
  });
  return items;
}

/**
 * `service_tier` changes what the provider charges for the call, which the catalog's price does
 * not follow: withheld, with a warning (as a chat client's is, chat-passthrough-request.ts).
 */
const PRICED_BY_TIER = ['service_tier'] as const;

/**
 * A Responses client's body → the body for an upstream that speaks Responses too, with every
 * field the client sent kept as it is (reasoning, include, built-in tools, fields the gateway has
 * never heard of), except `service_tier` (above) and the conversation state, which the gateway
 * keeps itself:
 *
 * - `store` is always false upstream: the gateway stores the response (when the client asked) in
 *   its own database, so `previous_response_id`, `item_reference` and `GET /v1/responses/{id}`
 *   work the same whatever provider answered; input items lose their ids (above);
 * - `previous_response_id` is resolved by the gateway: the stored conversation is put ahead of
 *   the client's own input, as the earlier turns' Responses upstream saw it (`wireItems`) when
 *   they were passed through, else encoded from the canonical `history` (system messages left out).
 *
 * What names the operator's upstream storage (files by id, vector stores, code containers) is
 * refused (upstream-files.ts). What the canonical view leaves out is measured for the hold
 * (`uncounted`), and so are built-in tools billed per call, bounded by `max_tool_calls`
 * (responses-tool-fees.ts). `model` stays the gateway's id here; the provider swaps in its upstream model.
 */
export function responsesPassthroughRequest(
  body: Json,
  history: CanonicalMessage[],
  wireItems?: unknown[],
): PassthroughRequest {
  refuseResponsesStorage(body);
  const warnings: TranslationWarning[] = [];
  const uncounted = responsesLeftOut(body);
  const { previous_response_id: _resolved, ...rest } = withoutSettings(body, PRICED_BY_TIER, warnings);
  const value: Json = { ...rest, store: false };
  const perCall = perCallTools(body, value, warnings);
  if (perCall) uncounted.perCallTools = perCall;
  uncounted.files += serverRunTools(body);
  const own = Array.isArray(body.input) ? statelessItems(body.input, warnings) : body.input;
  if (wireItems) {
    // The earlier turns as this kind of upstream saw them (responses-conversation.ts): files and
    // every other part the canonical conversation has no form for are sent again.
    const input = typeof own === 'string' ? [{ type: 'message', role: 'user', content: own }] : own;
    value.input = [...wireItems, ...(Array.isArray(input) ? input : [])];
    // What of them the stored canonical conversation (held as history) has no form for.
    const earlier = responsesLeftOut({ input: wireItems as Json[] });
    uncounted.textTokens += earlier.textTokens;
    uncounted.images += earlier.images;
    uncounted.files += earlier.files;
    return { value, warnings, uncounted };
  }
  if (!history.length) {
    if (Array.isArray(own)) value.input = own;
    return { value, warnings, uncounted };
  }
  const earlier = encodeResponsesRequest({ model: '', messages: history, stream: false }, '');
  const input = typeof own === 'string' ? [{ type: 'message', role: 'user', content: own }] : own;
  value.input = [...earlier.value.input, ...(Array.isArray(input) ? input : [])];
  return { value, warnings: [...earlier.warnings, ...warnings], uncounted };
}

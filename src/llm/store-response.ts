import type { CanonicalMessage, CanonicalResponse } from '../../translators/canonical/index.ts';
import type { AppContext } from '../app/context.ts';
import { toStorable } from '../http/hostile-json.ts';
import { type Call, wireFor } from './llm-call.ts';
import {
  MAX_WIRE_ITEMS_CHARS,
  responsesConversationItems,
} from '../../translators/passthrough/responses-conversation.ts';
import { saveResponse } from './llm-responses.repository.ts';

/**
 * Saves a Responses conversation that asked to be stored, before the client can refer to it:
 * `json` is the response exactly as the client got it when passed through; otherwise it is
 * encoded here. Stored as Postgres can hold it: NUL and unpaired surrogates replaced (the
 * upstream got them as sent).
 */
export async function storeResponse(
  db: AppContext['db'],
  call: Call,
  response: CanonicalResponse,
  json?: unknown,
): Promise<void> {
  const state = call.decoded.responses;
  if (!state?.store) return;
  const encoded = (json ??
    call.format.encodeResponse({ ...response, id: call.encode.id, model: call.served.model.id }, call.encode)) as {
    output?: unknown[];
  };
  const assistant: CanonicalMessage = { role: 'assistant', content: response.content };
  await saveResponse(db, {
    id: call.encode.id,
    accountId: call.auth.accountId,
    model: call.served.model.id,
    previousResponseId: state.previousResponseId,
    messages: toStorable([
      ...call.decoded.request.messages.filter((m) => m.role !== 'system'),
      assistant,
    ]) as CanonicalMessage[],
    outputItems: toStorable(encoded.output ?? []) as unknown[],
    response: toStorable(encoded),
    wireItemsJson: wireItemsOf(call, encoded.output ?? []),
  });
}

/** The conversation as a Responses upstream saw it (JSON text), when this turn was passed through to one. */
function wireItemsOf(call: Call, output: unknown[]): string | undefined {
  const wire = wireFor(call);
  if (wire?.format !== 'responses') return undefined;
  const text = JSON.stringify(toStorable(responsesConversationItems(wire.body.input, output)));
  return text.length > MAX_WIRE_ITEMS_CHARS ? undefined : text;
}

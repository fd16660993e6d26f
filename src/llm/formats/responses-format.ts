import {
  createResponsesStreamEncoder,
  decodeResponsesRequest,
  encodeResponsesResponse,
  type ResponsesEcho,
} from '../../../translators/responses/index.ts';
import {
  renameResponseObject,
  responsesCanonicalView,
  responsesPassthrough,
  responsesPassthroughRequest,
} from '../../../translators/passthrough/index.ts';
import type { ClientFormat, EncodeContext } from '../client-format.ts';

const now = () => Math.floor(Date.now() / 1000);

/** The echo-back settings decoded with the request (ResponsesState keeps them opaque). */
const echoOf = (ctx: EncodeContext) => (ctx.decoded.responses?.echo ?? {}) as Partial<ResponsesEcho>;

/**
 * `POST /v1/responses`. An upstream that speaks Responses gets the client's own body and answers
 * straight through (response id, model and conversation state renamed); any other is translated.
 * Conversation state (`store`, `previous_response_id`) is always the service's, whatever the
 * upstream (docs/architecture.md).
 * @see https://platform.openai.com/docs/api-reference/responses/create
 */
export const responsesFormat: ClientFormat = {
  name: 'responses',
  family: 'openai',
  idPrefix: 'resp_',
  passthrough: {
    format: 'responses',
    rules: responsesPassthrough,
    request: responsesPassthroughRequest,
    view: responsesCanonicalView,
    response: renameResponseObject,
  },
  decode(body) {
    const { value, warnings } = decodeResponsesRequest(body);
    return {
      request: value.request,
      warnings,
      includeUsage: true,
      responses: { previousResponseId: value.previousResponseId, store: value.store, echo: { ...value.echo } },
    };
  },
  encodeResponse: (response, ctx) =>
    encodeResponsesResponse(
      { ...response, id: ctx.id, model: ctx.model },
      { ...echoOf(ctx), responseId: ctx.id, completedAt: now() },
    ),
  encoder: (ctx) =>
    createResponsesStreamEncoder({ ...echoOf(ctx), responseId: ctx.id, model: ctx.model, createdAt: ctx.created, now }),
};

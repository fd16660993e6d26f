import { formatSse, type EventSourceMessage } from '../common/sse.ts';
import { asObject, asString, type Json } from '../common/validation.ts';
import { objectOf, parseObject, type PassthroughContext, type PassthroughRules } from './passthrough-rules.ts';

/** Events whose `response` is the whole response object (the snapshot the SDKs keep). */
const LIFECYCLE = new Set([
  'response.created',
  'response.queued',
  'response.in_progress',
  'response.completed',
  'response.incomplete',
  'response.failed',
]);
/** The events that end a Responses stream. */
const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);

const typeOf = (data: Json, message: EventSourceMessage) => asString(data.type) ?? message.event ?? '';

/**
 * The response object as the client must see it: the gateway's id and model, and the gateway's
 * own conversation state (`store`, `previous_response_id`), which the upstream never saw (it is
 * always called with `store: false` and the conversation spelled out in `input`). Every other
 * field, known to the gateway or not, stays as the upstream wrote it.
 */
export function renameResponseObject(response: Json, ctx: PassthroughContext): Json {
  const renamed: Json = { ...response, model: ctx.gatewayModel };
  if (ctx.response) {
    renamed.id = ctx.response.id;
    renamed.store = ctx.response.store;
    renamed.previous_response_id = ctx.response.previousResponseId;
  }
  return renamed;
}

/** A lifecycle event with its response object renamed; any other event as it came. */
function renamedEvent(data: Json, type: string, ctx: PassthroughContext): Json | undefined {
  const response = asObject(data.response);
  if (!LIFECYCLE.has(type) || !response) return undefined;
  return { ...data, response: renameResponseObject(response, ctx) };
}

/**
 * An `error` event as documented has its fields at the top level, but the openai SDKs throw only
 * on an `error` object inside it (as OpenAI itself sends it): one is added when missing, so the
 * client's SDK raises instead of ending quietly.
 */
function nestedError(data: Json): Json | undefined {
  if (asObject(data.error)) return undefined;
  const code = asString(data.code) ?? 'server_error';
  const message = asString(data.message) ?? 'the upstream reported an error';
  return { ...data, error: { type: 'server_error', code, message, param: data.param ?? null } };
}

/**
 * Responses → Responses: events forwarded with their `event:` names and in their own words
 * (reasoning, built-in tools, annotations and fields the gateway does not model included). Only
 * the lifecycle events' response objects are rewritten, parsed as JSON rather than patched as
 * text, since a tool schema or an MCP tool list inside them may hold a `"model"` key of its own.
 * @see https://platform.openai.com/docs/api-reference/responses-streaming
 */
export const responsesPassthrough: PassthroughRules = {
  classify(message) {
    const data = objectOf(message);
    if (!data) return 'garbage';
    const type = typeOf(data, message);
    if (type === 'error') return 'error';
    return TERMINAL.has(type) ? 'terminal' : 'data';
  },
  forward(message, ctx) {
    const data = parseObject(message.data);
    const type = data ? typeOf(data, message) : '';
    const rewritten = data && (type === 'error' ? nestedError(data) : renamedEvent(data, type, ctx));
    return formatSse(rewritten ?? message.data, message.event);
  },
  finalObject(message, ctx) {
    const data = parseObject(message.data);
    if (!data || !TERMINAL.has(typeOf(data, message))) return undefined;
    return asObject(renamedEvent(data, typeOf(data, message), ctx)?.response);
  },
  // Fields at the top level as documented and nested under `error` as OpenAI sends them: the SDK throws on either.
  errorEvent: (code, message) =>
    formatSse(
      { type: 'error', code, message, param: null, error: { type: 'server_error', code, message, param: null } },
      'error',
    ),
  keepsUpstreamId: false,
};

import type { CanonicalRequest } from '../canonical/request.ts';
import type { Translated, TranslationWarning } from '../canonical/warnings.ts';
import { decodeMessages } from './decode-messages.ts';
import { RequestSchema } from './request-schema.ts';
import { decodeResponseFormat } from './response-format.ts';
import { decodeToolChoice, decodeTools } from './tools.ts';
import { dropFields, knownFields, refuseFields, requestObject, warnUnknownFields } from '../common/request-fields.ts';
import { decodeEffort } from '../common/openai-reasoning.ts';
import { invalid, isSet, parseAt } from '../common/validation.ts';

/**
 * Settings the canonical request cannot carry: dropped with a warning (their defaults — null,
 * false, 0 — pass quietly). An OpenAI-compatible upstream gets them as written instead, in the
 * client's own body (translators/passthrough/chat-passthrough-request.ts).
 */
const DROPPED = [
  'frequency_penalty',
  'presence_penalty',
  'logit_bias',
  'logprobs',
  'top_logprobs',
  'seed',
  'service_tier',
  'store',
  'metadata',
  'verbosity',
  'prediction',
  'prompt_cache_key',
  'prompt_cache_retention',
  'prompt_cache_options',
  'safety_identifier',
  'moderation',
] as const;

/** Settings whose loss would change the answer: refused. */
const REFUSED: Record<string, string> = {
  audio: 'audio output is not supported',
  functions: 'functions are deprecated and not supported; use tools',
  function_call: 'function_call is deprecated and not supported; use tool_choice',
  web_search_options: 'web search is not supported',
};

/** Every top-level field this decoder reads, drops or refuses; anything else is warned about. */
const KNOWN = knownFields(Object.keys(RequestSchema.entries), DROPPED, Object.keys(REFUSED), [
  'modalities',
  'reasoning_effort',
]);

/** Set to anything but its default (null, false, 0). */
const isChanged = (value: unknown): boolean => value !== undefined && value !== null && value !== false && value !== 0;

export interface DecodedChatRequest {
  request: CanonicalRequest;
  /** `stream_options.include_usage` on a streamed request: the client wants the trailing usage chunk. */
  includeUsage: boolean;
}

/**
 * A `POST /v1/chat/completions` body → the canonical request. `max_completion_tokens` wins over
 * the older `max_tokens`; `stop` becomes stop sequences (empty strings dropped); `n` above 1 is
 * refused, since the gateway generates one choice.
 */
export function decodeChatRequest(body: unknown): Translated<DecodedChatRequest> {
  const obj = requestObject(body);
  const req = parseAt(RequestSchema, obj, '');
  const warnings: TranslationWarning[] = [];

  refuseFields(obj, REFUSED);
  if (typeof req.n === 'number' && req.n > 1) invalid('n', 'only one choice per request is supported; n must be 1');
  const modalities = obj.modalities;
  if (Array.isArray(modalities) && modalities.some((m) => m !== 'text'))
    invalid('modalities', 'only text output is supported');
  dropFields(obj, DROPPED, warnings, isChanged);
  warnUnknownFields(obj, KNOWN, warnings);

  const request: CanonicalRequest = {
    model: req.model,
    messages: decodeMessages(req.messages, warnings),
    stream: req.stream ?? false,
  };
  if (req.tools?.length) request.tools = decodeTools(req.tools);
  if (isSet(req.tool_choice))
    request.toolChoice = decodeToolChoice(req.tool_choice, request.tools?.map((tool) => tool.name) ?? []);
  if (typeof req.parallel_tool_calls === 'boolean') request.parallelToolCalls = req.parallel_tool_calls;
  if (typeof req.temperature === 'number') request.temperature = req.temperature;
  if (typeof req.top_p === 'number') request.topP = req.top_p;
  const maxTokens = req.max_completion_tokens ?? req.max_tokens;
  if (typeof maxTokens === 'number') request.maxTokens = maxTokens;
  const stops = (typeof req.stop === 'string' ? [req.stop] : (req.stop ?? [])).filter((stop) => stop !== '');
  if (stops.length) request.stopSequences = stops;
  if (isSet(req.response_format)) request.responseFormat = decodeResponseFormat(req.response_format);
  if (req.user) request.user = req.user;
  const reasoning = decodeEffort(obj.reasoning_effort, 'reasoning_effort');
  if (reasoning) request.reasoning = reasoning;

  const includeUsage = request.stream && req.stream_options?.include_usage === true;
  return { value: { request, includeUsage }, warnings };
}

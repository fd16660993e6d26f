import { decodeEffort } from '../common/openai-reasoning.ts';
import * as v from 'valibot';
import type { CanonicalMessage, CanonicalRequest } from '../canonical/request.ts';
import type { Translated, TranslationWarning } from '../canonical/warnings.ts';
import { decodeInput } from './input-items.ts';
import { decodeTextFormat, decodeToolChoice, decodeTools } from './tools.ts';
import {
  dropFields,
  ignoredSetting,
  knownFields,
  refuseFields,
  requestObject,
  warnUnknownFields,
} from '../common/request-fields.ts';
import {
  asObject,
  invalid,
  isRecord,
  isSet,
  nullishBoolean,
  nullishString,
  numberBetween,
  parseAt,
} from '../common/validation.ts';
import { defaultEcho, type ResponsesEcho } from './wire-types.ts';

export const RequestSchema = v.looseObject({
  model: v.pipe(v.string('must be a string'), v.nonEmpty('must not be empty')),
  input: v.union([v.string(), v.array(v.unknown())], 'must be a string or an array of input items'),
  instructions: nullishString(),
  stream: nullishBoolean(),
  temperature: v.nullish(numberBetween(0, 2)),
  top_p: v.nullish(numberBetween(0, 1)),
  max_output_tokens: v.nullish(
    v.pipe(v.number('must be a number'), v.integer('must be an integer'), v.minValue(1, 'must be at least 1')),
  ),
  tools: v.nullish(v.array(v.unknown(), 'must be an array')),
  tool_choice: v.nullish(v.unknown()),
  parallel_tool_calls: nullishBoolean(),
  text: v.nullish(v.looseObject({ format: v.nullish(v.unknown()) }, 'must be an object')),
  previous_response_id: v.nullish(v.pipe(v.string('must be a string'), v.nonEmpty('must not be empty'))),
  store: nullishBoolean(),
  user: nullishString(),
  metadata: v.nullish(
    v.pipe(
      v.record(
        v.pipe(v.string(), v.maxLength(64, 'keys must be at most 64 characters')),
        v.pipe(v.string('values must be strings'), v.maxLength(512, 'values must be at most 512 characters')),
        'must be an object of strings',
      ),
      v.check((m) => Object.keys(m).length <= 16, 'must have at most 16 keys'),
    ),
  ),
});

/** Settings the gateway cannot honour and drops with a warning. */
const DROPPED = [
  'include',
  'top_logprobs',
  'truncation',
  'service_tier',
  'prompt_cache_key',
  'prompt_cache_retention',
  'safety_identifier',
  'max_tool_calls',
  'stream_options',
] as const;
/** Settings whose absence would change the answer, so they are refused. */
const REFUSED: Record<string, string> = {
  conversation: 'conversations are not supported; continue with previous_response_id',
  prompt: 'prompt templates are not supported; send input',
  background: 'background mode is not supported',
};

/** Every top-level field this decoder reads, drops or refuses; anything else is warned about. */
const KNOWN = knownFields(Object.keys(RequestSchema.entries), DROPPED, Object.keys(REFUSED), ['reasoning', 'text']);

export interface DecodedResponsesRequest {
  request: CanonicalRequest;
  previousResponseId?: string;
  store: boolean;
  instructions?: string;
  metadata?: Record<string, string>;
  /** Everything the response object echoes back, ready for the encoders' context. */
  echo: ResponsesEcho;
}

/**
 * A `POST /v1/responses` body → the canonical request. `instructions` lead as a system message;
 * the service prepends the stored conversation of `previous_response_id` after them (the earlier
 * response's instructions are not carried over, as OpenAI documents).
 */
export function decodeResponsesRequest(body: unknown): Translated<DecodedResponsesRequest> {
  const obj = requestObject(body);
  const req = parseAt(RequestSchema, obj, '');
  const warnings: TranslationWarning[] = [];
  refuseFields(obj, REFUSED, (value) => isSet(value) && value !== false);
  dropFields(obj, DROPPED, warnings);
  warnUnknownFields(obj, KNOWN, warnings);
  if (isRecord(obj.text) && isSet(obj.text.verbosity)) warnings.push(ignoredSetting('text.verbosity'));

  const messages: CanonicalMessage[] = [];
  if (req.instructions) messages.push({ role: 'system', content: [{ type: 'text', text: req.instructions }] });
  messages.push(...decodeInput(req.input, warnings));

  const echo = defaultEcho();
  const request: CanonicalRequest = { model: req.model, messages, stream: req.stream ?? false };
  if (req.tools?.length) {
    const tools = decodeTools(req.tools);
    request.tools = tools.canonical;
    echo.tools = tools.wire;
  }
  if (req.tool_choice !== undefined && req.tool_choice !== null) {
    const choice = decodeToolChoice(req.tool_choice, request.tools?.map((t) => t.name) ?? []);
    request.toolChoice = choice.canonical;
    echo.toolChoice = choice.wire;
  }
  if (typeof req.parallel_tool_calls === 'boolean')
    request.parallelToolCalls = echo.parallelToolCalls = req.parallel_tool_calls;
  if (typeof req.temperature === 'number') request.temperature = echo.temperature = req.temperature;
  if (typeof req.top_p === 'number') request.topP = echo.topP = req.top_p;
  if (typeof req.max_output_tokens === 'number') request.maxTokens = echo.maxOutputTokens = req.max_output_tokens;
  if (req.text?.format !== undefined && req.text.format !== null) {
    const format = decodeTextFormat(req.text.format);
    request.responseFormat = format.canonical;
    echo.textFormat = format.wire;
  }
  if (req.user) request.user = echo.user = req.user;
  const reasoning = asObject(obj.reasoning);
  if (isSet(obj.reasoning) && !reasoning) invalid('reasoning', 'must be an object');
  const settings = decodeEffort(reasoning?.effort, 'reasoning.effort');
  if (settings) {
    request.reasoning = settings;
    echo.reasoningEffort = settings.enabled === false ? 'none' : (settings.effort ?? null);
  }
  if (isSet(reasoning?.summary) || isSet(reasoning?.generate_summary))
    warnings.push(ignoredSetting(isSet(reasoning?.summary) ? 'reasoning.summary' : 'reasoning.generate_summary'));

  const store = req.store ?? true;
  echo.store = store;
  echo.instructions = req.instructions ?? null;
  echo.previousResponseId = req.previous_response_id ?? null;
  echo.metadata = req.metadata ?? {};

  const value: DecodedResponsesRequest = { request, store, echo };
  if (req.previous_response_id) value.previousResponseId = req.previous_response_id;
  if (req.instructions) value.instructions = req.instructions;
  if (req.metadata) value.metadata = req.metadata;
  return { value, warnings };
}

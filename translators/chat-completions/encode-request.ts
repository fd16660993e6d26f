import type { CanonicalRequest } from '../canonical/request.ts';
import type { Translated, TranslationWarning } from '../canonical/warnings.ts';
import { encodeMessages } from './encode-messages.ts';
import { maxTokensField } from './max-tokens-field.ts';
import { MAX_STOP_SEQUENCES } from './request-schema.ts';
import { encodeResponseFormat } from './response-format.ts';
import { encodeToolChoice, encodeTools } from './tools.ts';
import { requestHasCacheControl } from '../common/cache-control.ts';
import { encodeEffort, warnDroppedReasoning } from '../common/openai-reasoning.ts';
import type { ChatRequest } from './wire-types.ts';

/** Cache marks have no place in an OpenAI request: OpenAI-compatible servers cache prompt prefixes on their own. */
export const CACHE_CONTROL_NOT_SENT: TranslationWarning = {
  type: 'unsupported-setting',
  field: 'cache_control',
  message: 'cache_control marks are not sent to this upstream, which caches prompt prefixes automatically',
};

/** OpenAI accepts at most four stop sequences; more are cut to four, with a warning, never dropped. */
function encodeStops(stops: string[] | undefined, warnings: TranslationWarning[]): string[] | undefined {
  if (!stops?.length) return undefined;
  if (stops.length > MAX_STOP_SEQUENCES) {
    warnings.push({
      type: 'changed-value',
      field: 'stop',
      message: `chat completions accept at most ${MAX_STOP_SEQUENCES} stop sequences; only the first ${MAX_STOP_SEQUENCES} were sent`,
    });
  }
  return stops.slice(0, MAX_STOP_SEQUENCES);
}

/**
 * The canonical request → the body for an OpenAI-compatible chat-completions upstream. A stream
 * always asks for `stream_options.include_usage`, so the gateway can bill from real usage even
 * when the client did not ask for it. `tool_choice` and `parallel_tool_calls` are only sent with
 * tools (OpenAI refuses them otherwise).
 */
export function encodeChatRequest(req: CanonicalRequest, upstreamModel: string): Translated<ChatRequest> {
  const warnings: TranslationWarning[] = [];
  const body: ChatRequest = {
    model: upstreamModel,
    messages: encodeMessages(req.messages, warnings),
    stream: req.stream,
  };
  if (req.stream) body.stream_options = { include_usage: true };
  if (req.temperature !== undefined) body.temperature = req.temperature;
  if (req.topP !== undefined) body.top_p = req.topP;
  if (req.maxTokens !== undefined) body[maxTokensField(upstreamModel)] = req.maxTokens;
  const stops = encodeStops(req.stopSequences, warnings);
  if (stops) body.stop = stops;
  if (req.tools?.length) {
    body.tools = encodeTools(req.tools);
    if (req.toolChoice) body.tool_choice = encodeToolChoice(req.toolChoice);
    if (req.parallelToolCalls !== undefined) body.parallel_tool_calls = req.parallelToolCalls;
  } else if (req.toolChoice?.type === 'required' || req.toolChoice?.type === 'tool') {
    warnings.push({
      type: 'unsupported-setting',
      field: 'tool_choice',
      message: 'tool_choice requires tools; it was dropped because no tools were given',
    });
  }
  if (req.responseFormat) body.response_format = encodeResponseFormat(req.responseFormat);
  if (req.user) body.user = req.user;
  const effort = encodeEffort(req.reasoning, 'reasoning_effort', warnings);
  if (effort) body.reasoning_effort = effort;
  warnDroppedReasoning(req.messages, warnings);
  if (requestHasCacheControl(req.messages, req.tools)) warnings.push(CACHE_CONTROL_NOT_SENT);
  return { value: body, warnings };
}

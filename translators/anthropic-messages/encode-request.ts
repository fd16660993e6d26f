import type { CanonicalRequest, ResponseFormat } from '../canonical/request.ts';
import type { Translated, TranslationWarning } from '../canonical/warnings.ts';
import { encodeMessages } from './encode-messages.ts';
import { encodeToolChoice, encodeTools } from './tools.ts';
import { encodeReasoning } from './reasoning.ts';
import type { AnthropicRequest, AnthropicTextParam } from './wire-types.ts';

/** Anthropic requires `max_tokens`; this is sent when the client gave none. */
export const DEFAULT_MAX_TOKENS = 4096;

/**
 * Anthropic has no JSON mode. The gateway asks for JSON through this system instruction (and
 * says so in a warning); json-schema formats use Anthropic's native structured outputs
 * (`output_config.format`), which guarantee the schema.
 */
export const JSON_MODE_INSTRUCTION =
  'Respond only with a single valid JSON object, with no other text before or after it.';

function encodeResponseFormat(
  format: ResponseFormat | undefined,
  system: AnthropicTextParam[],
  warnings: TranslationWarning[],
): AnthropicRequest['output_config'] {
  if (!format) return undefined;
  switch (format.type) {
    case 'text':
      return undefined;
    case 'json':
      system.push({ type: 'text', text: JSON_MODE_INSTRUCTION });
      warnings.push({
        type: 'changed-value',
        field: 'response_format',
        message: 'Anthropic has no JSON mode; JSON output was requested through a system instruction',
      });
      return undefined;
    case 'json-schema':
      return { format: { type: 'json_schema', schema: format.schema } };
    default: {
      const exhaustive: never = format;
      throw new Error(`unknown response format ${JSON.stringify(exhaustive)}`);
    }
  }
}

/** Anthropic rejects stop sequences made only of whitespace (chat clients often send "\n"). */
function encodeStops(stops: string[] | undefined, warnings: TranslationWarning[]): string[] | undefined {
  if (!stops?.length) return undefined;
  const kept = stops.filter((stop) => stop.trim() !== '');
  if (kept.length < stops.length) {
    warnings.push({
      type: 'changed-value',
      field: 'stop',
      message: 'whitespace-only stop sequences are not accepted by Anthropic and were dropped',
    });
  }
  return kept.length ? kept : undefined;
}

/** The canonical request → the body for an Anthropic Messages upstream. */
export function encodeAnthropicRequest(req: CanonicalRequest, upstreamModel: string): Translated<AnthropicRequest> {
  const warnings: TranslationWarning[] = [];
  const { system, messages } = encodeMessages(req.messages, warnings);
  const outputConfig = encodeResponseFormat(req.responseFormat, system, warnings);

  const defaulted = req.maxTokens === undefined;
  const reasoning = encodeReasoning(req.reasoning, req.maxTokens ?? DEFAULT_MAX_TOKENS, defaulted, warnings);
  if (defaulted) {
    warnings.push({
      type: 'changed-value',
      field: 'max_tokens',
      message: `Anthropic requires max_tokens; ${reasoning.maxTokens} was sent`,
    });
  }
  const body: AnthropicRequest = {
    model: upstreamModel,
    max_tokens: reasoning.maxTokens,
    messages,
    stream: req.stream,
  };
  // One string keeps the plain case as it always was; blocks keep each text's cache mark in place.
  if (system.some((block) => block.cache_control)) body.system = system;
  else if (system.length) body.system = system.map((block) => block.text).join('\n\n');
  if (reasoning.thinking) body.thinking = reasoning.thinking;

  if (req.temperature !== undefined) {
    body.temperature = Math.min(req.temperature, 1);
    if (req.temperature > 1)
      warnings.push({
        type: 'changed-value',
        field: 'temperature',
        message: 'Anthropic accepts temperature 0 to 1; 1 was sent',
      });
  }
  if (req.topP !== undefined) {
    if (req.temperature === undefined) body.top_p = req.topP;
    else
      warnings.push({
        type: 'unsupported-setting',
        field: 'top_p',
        message: 'Anthropic accepts temperature or top_p, not both; top_p was dropped',
      });
  }
  const stops = encodeStops(req.stopSequences, warnings);
  if (stops) body.stop_sequences = stops;

  if (req.tools?.length) {
    body.tools = encodeTools(req.tools);
    const choice = encodeToolChoice(req.toolChoice, req.parallelToolCalls);
    if (choice) body.tool_choice = choice;
  } else if (req.toolChoice && (req.toolChoice.type === 'required' || req.toolChoice.type === 'tool')) {
    warnings.push({
      type: 'unsupported-setting',
      field: 'tool_choice',
      message: 'tool_choice requires tools; it was dropped because no tools were given',
    });
  }
  if (outputConfig || reasoning.effort)
    body.output_config = { ...outputConfig, ...(reasoning.effort ? { effort: reasoning.effort } : {}) };
  if (req.user) body.metadata = { user_id: req.user };
  return { value: body, warnings };
}

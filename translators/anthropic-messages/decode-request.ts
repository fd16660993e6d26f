import type { CanonicalRequest } from '../canonical/request.ts';
import type { Translated, TranslationWarning } from '../canonical/warnings.ts';
import { decodeMessages, decodeSystem } from './decode-content.ts';
import { JsonSchemaFormatSchema, RequestSchema } from './request-schema.ts';
import { decodeToolChoice, decodeTools } from './tools.ts';
import { decodeReasoning } from './reasoning.ts';
import { dropFields, knownFields, refuseFields, requestObject, warnUnknownFields } from '../common/request-fields.ts';
import { invalid, isSet, parseAt } from '../common/validation.ts';

/** Settings the gateway cannot honour: dropped with a warning. */
const DROPPED = [
  'top_k',
  'service_tier',
  'speed',
  'inference_geo',
  'container',
  'context_management',
  'diagnostics',
  'user_profile_id',
  'workspace_id',
] as const;

/** Settings whose loss would change the answer: refused. */
const REFUSED: Record<string, string> = {
  mcp_servers: 'MCP servers are not supported; declare the tools in tools',
};

/** Every top-level field this decoder reads, drops or refuses (`cache_control` is warned on its own). */
const KNOWN = knownFields(Object.keys(RequestSchema.entries), DROPPED, Object.keys(REFUSED), ['cache_control']);

/** The name canonical json-schema formats need; Anthropic's `output_config.format` has none. */
export const ANTHROPIC_SCHEMA_NAME = 'response';

/**
 * A `POST /v1/messages` body → the canonical request. `system` leads as a system message;
 * `output_config.format` (structured outputs) becomes a json-schema response format.
 */
export function decodeAnthropicRequest(body: unknown): Translated<CanonicalRequest> {
  const obj = requestObject(body);
  const req = parseAt(RequestSchema, obj, '');
  const warnings: TranslationWarning[] = [];

  refuseFields(obj, REFUSED);
  if (isSet(req.temperature) && isSet(req.top_p)) invalid('top_p', 'use either temperature or top_p, not both');
  dropFields(obj, DROPPED, warnings);
  warnUnknownFields(obj, KNOWN, warnings);
  const reasoning = decodeReasoning(req.thinking, req.output_config?.effort, warnings);

  const request: CanonicalRequest = {
    model: req.model,
    messages: [...decodeSystem(req.system), ...decodeMessages(req.messages, warnings)],
    stream: req.stream ?? false,
    maxTokens: req.max_tokens,
  };
  if (req.tools?.length) request.tools = decodeTools(req.tools, warnings);
  if (isSet(req.tool_choice)) {
    const choice = decodeToolChoice(req.tool_choice, request.tools?.map((tool) => tool.name) ?? []);
    request.toolChoice = choice.toolChoice;
    if (choice.parallelToolCalls !== undefined) request.parallelToolCalls = choice.parallelToolCalls;
  }
  if (typeof req.temperature === 'number') request.temperature = req.temperature;
  if (typeof req.top_p === 'number') request.topP = req.top_p;
  if (req.stop_sequences?.length) request.stopSequences = req.stop_sequences;
  if (isSet(req.output_config?.format)) {
    const format = parseAt(JsonSchemaFormatSchema, req.output_config?.format, 'output_config.format');
    request.responseFormat = { type: 'json-schema', name: ANTHROPIC_SCHEMA_NAME, schema: format.schema };
    // Anthropic constrains the answer to the schema; an OpenAI upstream's strict mode needs every
    // property required, which a schema written for Anthropic need not say, so it is not asked
    // for. Seen only when the call is translated (a passed-through body keeps its own warnings).
    warnings.push({
      type: 'changed-value',
      field: 'output_config.format',
      message:
        'sent to this upstream as a non-strict JSON schema: the answer is asked to follow it, not constrained to it as Anthropic does',
    });
  }
  if (req.metadata?.user_id) request.user = req.metadata.user_id;
  if (reasoning) request.reasoning = reasoning;
  if (isSet(obj.cache_control)) {
    warnings.push({
      type: 'unsupported-setting',
      field: 'cache_control',
      message: 'top-level cache_control is not supported and was ignored; mark blocks with cache_control instead',
    });
  }
  return { value: request, warnings };
}

import { requestHasCacheControl } from '../common/cache-control.ts';
import { encodeEffort, warnDroppedReasoning } from '../common/openai-reasoning.ts';
import type { CanonicalMessage, CanonicalRequest, ImagePart, TextPart } from '../canonical/request.ts';
import type { Translated, TranslationWarning } from '../canonical/warnings.ts';
import { encodeImageUrl } from '../common/image-url.ts';
import { encodeTextFormat, encodeToolChoice, encodeTools } from './tools.ts';
import type { ResponsesFunctionTool, ResponsesTextFormat, ResponsesToolChoice } from './wire-types.ts';

type InputPart =
  | { type: 'input_text'; text: string }
  | { type: 'input_image'; image_url: string; detail: 'auto' | 'low' | 'high' };
export type ResponsesInputItem =
  | { type: 'message'; role: 'user' | 'system'; content: InputPart[] }
  | { type: 'message'; role: 'assistant'; content: string }
  | { type: 'function_call'; call_id: string; name: string; arguments: string }
  | { type: 'function_call_output'; call_id: string; output: string | InputPart[] };

export interface ResponsesWireRequest {
  model: string;
  input: ResponsesInputItem[];
  instructions?: string;
  stream: boolean;
  store: false;
  temperature?: number;
  top_p?: number;
  max_output_tokens?: number;
  tools?: ResponsesFunctionTool[];
  tool_choice?: ResponsesToolChoice;
  parallel_tool_calls?: boolean;
  text?: { format: ResponsesTextFormat };
  user?: string;
  reasoning?: { effort: 'minimal' | 'low' | 'medium' | 'high' };
}

/** OpenAI rejects smaller `max_output_tokens`. */
const MIN_OUTPUT_TOKENS = 16;

function inputPart(part: TextPart | ImagePart): InputPart {
  if (part.type === 'text') return { type: 'input_text', text: part.text };
  return { type: 'input_image', image_url: encodeImageUrl(part.source), detail: part.detail ?? 'auto' };
}

function encodeMessage(message: CanonicalMessage, index: number, warnings: TranslationWarning[]): ResponsesInputItem[] {
  switch (message.role) {
    case 'system':
    case 'user':
      return [{ type: 'message', role: message.role, content: message.content.map(inputPart) }];
    case 'assistant':
      // Reasoning parts are left out (warned once by the caller): a Responses upstream only takes its own reasoning items back.
      return message.content.flatMap((part): ResponsesInputItem[] => {
        switch (part.type) {
          case 'text':
            return [{ type: 'message', role: 'assistant', content: part.text }];
          case 'tool-call':
            return [{ type: 'function_call', call_id: part.id, name: part.name, arguments: part.arguments }];
          case 'reasoning':
            return [];
          default: {
            const exhaustive: never = part;
            throw new Error(`unknown content part ${JSON.stringify(exhaustive)}`);
          }
        }
      });
    case 'tool':
      return message.content.map((result): ResponsesInputItem => {
        if (result.isError)
          warnings.push({
            type: 'unsupported-content',
            field: `messages[${index}]`,
            message: 'tool results cannot be marked as errors in the Responses format',
          });
        const textOnly = result.content.every((p) => p.type === 'text');
        const output = textOnly
          ? result.content.map((p) => (p.type === 'text' ? p.text : '')).join('')
          : result.content.map(inputPart);
        return { type: 'function_call_output', call_id: result.toolCallId, output };
      });
    default: {
      const exhaustive: never = message;
      throw new Error(`unknown message ${JSON.stringify(exhaustive)}`);
    }
  }
}

/**
 * The canonical request → the body for an upstream speaking Responses. Leading system messages
 * become `instructions`; later ones stay in place as system items. The upstream never stores it.
 */
export function encodeResponsesRequest(req: CanonicalRequest, upstreamModel: string): Translated<ResponsesWireRequest> {
  const warnings: TranslationWarning[] = [];
  const leading: string[] = [];
  let start = 0;
  while (start < req.messages.length) {
    const message = req.messages[start];
    if (message?.role !== 'system') break;
    leading.push(message.content.map((p) => p.text).join(''));
    start++;
  }
  const input = req.messages.slice(start).flatMap((m, i) => encodeMessage(m, start + i, warnings));
  const body: ResponsesWireRequest = { model: upstreamModel, input, stream: req.stream, store: false };
  if (leading.length) body.instructions = leading.join('\n\n');
  if (req.temperature !== undefined) body.temperature = req.temperature;
  if (req.topP !== undefined) body.top_p = req.topP;
  if (req.maxTokens !== undefined) {
    body.max_output_tokens = Math.max(req.maxTokens, MIN_OUTPUT_TOKENS);
    if (req.maxTokens < MIN_OUTPUT_TOKENS)
      warnings.push({
        type: 'changed-value',
        field: 'max_output_tokens',
        message: `raised to the Responses minimum of ${MIN_OUTPUT_TOKENS}`,
      });
  }
  if (req.tools?.length) body.tools = encodeTools(req.tools);
  if (req.toolChoice) body.tool_choice = encodeToolChoice(req.toolChoice);
  if (req.parallelToolCalls !== undefined) body.parallel_tool_calls = req.parallelToolCalls;
  if (req.responseFormat) body.text = { format: encodeTextFormat(req.responseFormat) };
  if (req.user) body.user = req.user;
  const effort = encodeEffort(req.reasoning, 'reasoning.effort', warnings);
  if (effort) body.reasoning = { effort };
  warnDroppedReasoning(req.messages, warnings);
  if (requestHasCacheControl(req.messages, req.tools))
    warnings.push({
      type: 'unsupported-setting',
      field: 'cache_control',
      message: 'cache_control marks are not sent to a Responses upstream, which caches prompt prefixes automatically',
    });
  if (req.stopSequences?.length)
    warnings.push({
      type: 'unsupported-setting',
      field: 'stop',
      message: 'the Responses API has no stop sequences; they were not sent',
    });
  return { value: body, warnings };
}

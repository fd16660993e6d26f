import * as v from 'valibot';
import type { ResponseFormat, ToolChoice, ToolDefinition } from '../canonical/request.ts';
import type { ResponsesFunctionTool, ResponsesTextFormat, ResponsesToolChoice } from './wire-types.ts';
import { jsonSchemaFormat } from '../common/json-schema-format.ts';
import { invalid, isRecord, nullishBoolean, nullishString, parseAt, str } from '../common/validation.ts';

const FunctionToolSchema = v.looseObject({
  name: v.pipe(str(), v.regex(/^[a-zA-Z0-9_-]{1,64}$/, 'must be 1 to 64 letters, digits, underscores or dashes')),
  description: nullishString(),
  parameters: v.nullish(v.record(v.string(), v.unknown(), 'must be a JSON Schema object')),
  strict: nullishBoolean(),
});

/** Function tools only; the built-in tools (web_search, file_search, …) need OpenAI's servers. */
export function decodeTools(tools: unknown[]): { canonical: ToolDefinition[]; wire: ResponsesFunctionTool[] } {
  const canonical: ToolDefinition[] = [];
  const wire: ResponsesFunctionTool[] = [];
  tools.forEach((tool, i) => {
    const at = `tools[${i}]`;
    if (!isRecord(tool)) invalid(at, 'must be an object');
    if (tool.type !== 'function')
      invalid(`${at}.type`, `tool type "${String(tool.type)}" is not supported; only function tools are`);
    const fn = parseAt(FunctionToolSchema, tool, at);
    const parameters = fn.parameters ?? { type: 'object', properties: {} };
    const def: ToolDefinition = { name: fn.name, parameters };
    if (fn.description) def.description = fn.description;
    if (typeof fn.strict === 'boolean') def.strict = fn.strict;
    canonical.push(def);
    wire.push({
      type: 'function',
      name: fn.name,
      description: fn.description ?? null,
      parameters,
      strict: fn.strict ?? null,
    });
  });
  return { canonical, wire };
}

export function encodeTools(tools: ToolDefinition[]): ResponsesFunctionTool[] {
  return tools.map((tool) => ({
    type: 'function',
    name: tool.name,
    description: tool.description ?? null,
    parameters: tool.parameters,
    // The Responses API treats a missing `strict` as true; say what the client meant.
    strict: tool.strict ?? false,
  }));
}

export function decodeToolChoice(
  choice: unknown,
  toolNames: string[],
): { canonical: ToolChoice; wire: ResponsesToolChoice } {
  if (choice === 'none' || choice === 'auto' || choice === 'required')
    return { canonical: { type: choice }, wire: choice };
  if (!isRecord(choice))
    return invalid('tool_choice', 'must be "none", "auto", "required" or {"type": "function", "name": …}');
  if (choice.type !== 'function')
    return invalid('tool_choice.type', `tool choice type "${String(choice.type)}" is not supported; use "function"`);
  const name = choice.name;
  if (typeof name !== 'string' || !name) return invalid('tool_choice.name', 'is required');
  if (!toolNames.includes(name))
    return invalid('tool_choice.name', `names the function "${name}", which is not among the tools`);
  return { canonical: { type: 'tool', name }, wire: { type: 'function', name } };
}

export function encodeToolChoice(choice: ToolChoice): ResponsesToolChoice {
  switch (choice.type) {
    case 'auto':
    case 'none':
    case 'required':
      return choice.type;
    case 'tool':
      return { type: 'function', name: choice.name };
    default: {
      const exhaustive: never = choice;
      throw new Error(`unknown tool choice ${JSON.stringify(exhaustive)}`);
    }
  }
}

const JsonSchemaFormat = v.looseObject({
  name: v.pipe(str(), v.regex(/^[a-zA-Z0-9_-]{1,64}$/, 'must be 1 to 64 letters, digits, underscores or dashes')),
  schema: v.record(v.string(), v.unknown(), 'must be a JSON Schema object'),
  strict: nullishBoolean(),
  description: nullishString(),
});

/** `text.format` → the canonical response format, plus the form echoed on the response. */
export function decodeTextFormat(format: unknown): { canonical: ResponseFormat; wire: ResponsesTextFormat } {
  if (!isRecord(format)) return invalid('text.format', 'must be an object');
  switch (format.type) {
    case 'text':
      return { canonical: { type: 'text' }, wire: { type: 'text' } };
    case 'json_object':
      return { canonical: { type: 'json' }, wire: { type: 'json_object' } };
    case 'json_schema': {
      const canonical = jsonSchemaFormat(parseAt(JsonSchemaFormat, format, 'text.format'));
      return { canonical, wire: encodeTextFormat(canonical) };
    }
    default:
      return invalid('text.format.type', 'must be one of text, json_object, json_schema');
  }
}

export function encodeTextFormat(format: ResponseFormat): ResponsesTextFormat {
  switch (format.type) {
    case 'text':
      return { type: 'text' };
    case 'json':
      return { type: 'json_object' };
    case 'json-schema': {
      const wire: ResponsesTextFormat = {
        type: 'json_schema',
        name: format.name,
        schema: format.schema,
        strict: format.strict ?? null,
      };
      if (format.description) wire.description = format.description;
      return wire;
    }
    default: {
      const exhaustive: never = format;
      throw new Error(`unknown response format ${JSON.stringify(exhaustive)}`);
    }
  }
}

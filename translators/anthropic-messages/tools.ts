import type { ToolChoice, ToolDefinition } from '../canonical/request.ts';
import type { TranslationWarning } from '../canonical/warnings.ts';
import { ToolChoiceSchema, ToolSchema } from './request-schema.ts';
import { cacheControlField, decodeCacheControl, withCacheControl } from '../common/cache-control.ts';
import { asObject, invalid, isSet, parseAt } from '../common/validation.ts';
import type { AnthropicToolChoice, AnthropicToolParam } from './wire-types.ts';

/** Tool fields with no canonical equivalent. */
export const DROPPED_TOOL_FIELDS = [
  'input_examples',
  'defer_loading',
  'allowed_callers',
  'eager_input_streaming',
] as const;

/**
 * Client `tools` → canonical tool definitions. Only custom tools (no `type`, or `type: 'custom'`)
 * can run through the gateway; Anthropic's server and client-built-in tools are refused.
 */
export function decodeTools(tools: unknown[], warnings: TranslationWarning[]): ToolDefinition[] {
  const seen = new Set<string>();
  return tools.map((raw, i) => {
    const path = `tools[${i}]`;
    const obj = asObject(raw) ?? invalid(path, 'must be an object');
    if (isSet(obj.type) && obj.type !== 'custom') {
      invalid(
        `${path}.type`,
        `tool type '${String(obj.type)}' is not supported; only custom tools (name, description, input_schema) are`,
      );
    }
    const tool = parseAt(ToolSchema, obj, path);
    if (seen.has(tool.name)) invalid(`${path}.name`, `duplicate tool name '${tool.name}'`);
    seen.add(tool.name);
    for (const field of DROPPED_TOOL_FIELDS) {
      if (isSet(obj[field]))
        warnings.push({
          type: 'unsupported-setting',
          field: `${path}.${field}`,
          message: `${field} is not supported and was ignored`,
        });
    }
    const def: ToolDefinition = { name: tool.name, parameters: tool.input_schema };
    if (typeof tool.description === 'string') def.description = tool.description;
    if (typeof tool.strict === 'boolean') def.strict = tool.strict;
    return withCacheControl(def, decodeCacheControl(obj, path));
  });
}

export interface DecodedToolChoice {
  toolChoice: ToolChoice;
  /** `disable_parallel_tool_use: true` → false. */
  parallelToolCalls?: boolean;
}

/** `tool_choice` → canonical; `any` is canonical `required`; a named tool must be declared. */
export function decodeToolChoice(raw: unknown, toolNames: string[]): DecodedToolChoice {
  const choice = parseAt(ToolChoiceSchema, raw, 'tool_choice');
  const out = (toolChoice: ToolChoice): DecodedToolChoice =>
    choice.disable_parallel_tool_use === true && choice.type !== 'none'
      ? { toolChoice, parallelToolCalls: false }
      : { toolChoice };
  switch (choice.type) {
    case 'auto':
      return out({ type: 'auto' });
    case 'none':
      return out({ type: 'none' });
    case 'any':
      return out({ type: 'required' });
    case 'tool': {
      const name = choice.name ?? invalid('tool_choice.name', 'is required when type is tool');
      if (!toolNames.includes(name)) invalid('tool_choice.name', `no tool named '${name}' in tools`);
      return out({ type: 'tool', name });
    }
    default: {
      const exhaustive: never = choice.type;
      throw new Error(`unknown tool_choice ${String(exhaustive)}`);
    }
  }
}

/** Canonical tools → Anthropic custom tools. */
export function encodeTools(tools: ToolDefinition[]): AnthropicToolParam[] {
  return tools.map((tool) => {
    const out: AnthropicToolParam = {
      name: tool.name,
      ...(tool.description !== undefined ? { description: tool.description } : {}),
      input_schema: tool.parameters,
    };
    if (tool.strict !== undefined) out.strict = tool.strict;
    return { ...out, ...cacheControlField(tool.cacheControl) };
  });
}

/**
 * Canonical tool choice and `parallelToolCalls` → Anthropic `tool_choice` (`required` is `any`;
 * parallel calls off is `disable_parallel_tool_use: true`, which `none` cannot carry).
 */
export function encodeToolChoice(
  choice: ToolChoice | undefined,
  parallelToolCalls: boolean | undefined,
): AnthropicToolChoice | undefined {
  const noParallel = parallelToolCalls === false ? { disable_parallel_tool_use: true } : {};
  if (!choice) return parallelToolCalls === false ? { type: 'auto', ...noParallel } : undefined;
  switch (choice.type) {
    case 'auto':
      return { type: 'auto', ...noParallel };
    case 'required':
      return { type: 'any', ...noParallel };
    case 'tool':
      return { type: 'tool', name: choice.name, ...noParallel };
    case 'none':
      return { type: 'none' };
    default: {
      const exhaustive: never = choice;
      throw new Error(`unknown tool choice ${JSON.stringify(exhaustive)}`);
    }
  }
}

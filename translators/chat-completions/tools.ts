import type { ToolChoice, ToolDefinition } from '../canonical/request.ts';
import { NamedToolChoiceSchema, ToolSchema } from './request-schema.ts';
import type { ChatTool, ChatToolChoice } from './wire-types.ts';
import { asObject, invalid, parseAt } from '../common/validation.ts';

/** OpenAI's default when a function declares no parameters. */
const NO_PARAMETERS = { type: 'object', properties: {} };

/** Client `tools` → canonical definitions. Only function tools run through the gateway; custom tools are refused. */
export function decodeTools(tools: unknown[]): ToolDefinition[] {
  const seen = new Set<string>();
  return tools.map((raw, i) => {
    const path = `tools[${i}]`;
    const type = asObject(raw)?.type;
    if (type !== undefined && type !== 'function')
      invalid(`${path}.type`, `tool type "${String(type)}" is not supported; only function tools are`);
    const { function: fn } = parseAt(ToolSchema, raw, path);
    if (seen.has(fn.name)) invalid(`${path}.function.name`, `duplicate tool name "${fn.name}"`);
    seen.add(fn.name);
    const def: ToolDefinition = { name: fn.name, parameters: fn.parameters ?? NO_PARAMETERS };
    if (typeof fn.description === 'string') def.description = fn.description;
    if (typeof fn.strict === 'boolean') def.strict = fn.strict;
    return def;
  });
}

export function encodeTools(tools: ToolDefinition[]): ChatTool[] {
  return tools.map((tool) => ({
    type: 'function',
    function: {
      name: tool.name,
      ...(tool.description !== undefined ? { description: tool.description } : {}),
      parameters: tool.parameters,
      ...(tool.strict !== undefined ? { strict: tool.strict } : {}),
    },
  }));
}

/**
 * `tool_choice` → canonical. `required` and a named function need tools; the named function must
 * be one of them. `allowed_tools` and custom tool choices are refused.
 */
export function decodeToolChoice(raw: unknown, toolNames: string[]): ToolChoice {
  if (raw === 'none' || raw === 'auto') return { type: raw };
  if (raw === 'required') {
    if (!toolNames.length) invalid('tool_choice', '"required" needs at least one tool in tools');
    return { type: 'required' };
  }
  const type = asObject(raw)?.type;
  if (type === 'allowed_tools' || type === 'custom')
    invalid('tool_choice.type', `tool choice type "${type}" is not supported; use "function"`);
  const choice = parseAt(NamedToolChoiceSchema, raw, 'tool_choice');
  const name = choice.function.name;
  if (!toolNames.includes(name))
    invalid('tool_choice.function.name', `names the function "${name}", which is not among the tools`);
  return { type: 'tool', name };
}

export function encodeToolChoice(choice: ToolChoice): ChatToolChoice {
  switch (choice.type) {
    case 'auto':
    case 'none':
    case 'required':
      return choice.type;
    case 'tool':
      return { type: 'function', function: { name: choice.name } };
    default: {
      const exhaustive: never = choice;
      throw new Error(`unknown tool choice ${JSON.stringify(exhaustive)}`);
    }
  }
}

import * as v from 'valibot';
import { asObject, nonEmptyText, nullishString, numberBetween, text } from '../common/validation.ts';

const nullishText = nullishString;

/**
 * valibot schemas of a `POST /v1/messages` body, as Anthropic's API reference and
 * `@anthropic-ai/sdk`'s `MessageCreateParamsBase` describe it. Content blocks are validated one by
 * one (see decode-content.ts) so errors name the exact block.
 * @see https://docs.anthropic.com/en/api/messages
 */

const jsonObject = (message: string) =>
  v.custom<Record<string, unknown>>((input) => asObject(input) !== undefined, message);

export const ANTHROPIC_EFFORTS = ['low', 'medium', 'high', 'xhigh', 'max'] as const;

export const RequestSchema = v.looseObject({
  model: nonEmptyText(),
  max_tokens: v.pipe(
    v.number('must be an integer'),
    v.integer('must be an integer'),
    v.minValue(1, 'must be at least 1'),
  ),
  messages: v.array(v.unknown(), 'must be an array of messages'),
  system: v.nullish(v.union([v.string(), v.array(v.unknown())], 'must be a string or an array of text blocks')),
  stream: v.nullish(v.boolean('must be a boolean')),
  temperature: v.nullish(numberBetween(0, 1)),
  top_p: v.nullish(numberBetween(0, 1)),
  top_k: v.nullish(
    v.pipe(v.number('must be an integer'), v.integer('must be an integer'), v.minValue(0, 'must be at least 0')),
  ),
  stop_sequences: v.nullish(v.array(text(), 'must be an array of strings')),
  tools: v.nullish(v.array(v.unknown(), 'must be an array')),
  tool_choice: v.nullish(v.unknown()),
  metadata: v.nullish(v.looseObject({ user_id: v.nullish(text()) }, 'must be an object')),
  output_config: v.nullish(
    v.looseObject(
      {
        format: v.nullish(v.unknown()),
        effort: v.nullish(v.picklist(ANTHROPIC_EFFORTS, `must be one of ${ANTHROPIC_EFFORTS.join(', ')}`)),
      },
      'must be an object',
    ),
  ),
  thinking: v.nullish(v.unknown()),
});

export const MessageSchema = v.looseObject({
  role: v.picklist(['user', 'assistant', 'system'], 'must be one of user, assistant'),
  content: v.union([v.string(), v.array(v.unknown())], 'must be a string or an array of content blocks'),
});

export const BlockTypeSchema = v.looseObject({ type: text() }, 'must be a content block object');

export const TextBlockSchema = v.looseObject({ type: v.literal('text'), text: text() });

export const ImageBlockSchema = v.looseObject({
  type: v.literal('image'),
  source: v.looseObject({ type: text() }, 'must be an object'),
});

export const IMAGE_MEDIA_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'] as const;

export const Base64SourceSchema = v.looseObject({
  type: v.literal('base64'),
  media_type: v.picklist(IMAGE_MEDIA_TYPES, `must be one of ${IMAGE_MEDIA_TYPES.join(', ')}`),
  data: nonEmptyText(),
});

export const UrlSourceSchema = v.looseObject({ type: v.literal('url'), url: nonEmptyText() });

export const ToolUseBlockSchema = v.looseObject({
  type: v.literal('tool_use'),
  id: nonEmptyText(),
  name: nonEmptyText(),
  input: jsonObject('must be an object'),
});

export const ThinkingBlockSchema = v.looseObject({
  type: v.literal('thinking'),
  thinking: text(),
  signature: nullishText(),
});

export const RedactedThinkingBlockSchema = v.looseObject({
  type: v.literal('redacted_thinking'),
  data: nonEmptyText(),
});

/** `thinking`: enabled with a budget (at least 1024, Anthropic's minimum), adaptive, or disabled. */
export const ThinkingSchema = v.variant(
  'type',
  [
    v.looseObject({
      type: v.literal('enabled'),
      budget_tokens: v.pipe(
        v.number('must be an integer'),
        v.integer('must be an integer'),
        v.minValue(1024, 'must be at least 1024'),
      ),
    }),
    v.looseObject({ type: v.literal('adaptive') }),
    v.looseObject({ type: v.literal('disabled') }),
  ],
  "type must be one of 'enabled', 'adaptive', 'disabled'",
);

export const ToolResultBlockSchema = v.looseObject({
  type: v.literal('tool_result'),
  tool_use_id: nonEmptyText(),
  content: v.nullish(v.union([v.string(), v.array(v.unknown())], 'must be a string or an array of content blocks')),
  is_error: v.nullish(v.boolean('must be a boolean')),
});

export const ToolSchema = v.looseObject({
  name: v.pipe(text(), v.regex(/^[a-zA-Z0-9_-]{1,128}$/, 'must be 1 to 128 letters, digits, underscores or hyphens')),
  description: v.nullish(text()),
  input_schema: jsonObject('must be a JSON Schema object'),
  strict: v.nullish(v.boolean('must be a boolean')),
});

export const ToolChoiceSchema = v.looseObject(
  {
    type: v.picklist(['auto', 'any', 'tool', 'none'], 'must be one of auto, any, tool, none'),
    name: v.nullish(nonEmptyText()),
    disable_parallel_tool_use: v.nullish(v.boolean('must be a boolean')),
  },
  'must be an object',
);

export const JsonSchemaFormatSchema = v.looseObject(
  { type: v.literal('json_schema', "must be 'json_schema'"), schema: jsonObject('must be a JSON Schema object') },
  'must be an object',
);

import * as v from 'valibot';
import { asObject, nonEmptyText, nullishBoolean, numberBetween, positiveInteger, text } from '../common/validation.ts';

/**
 * valibot schemas of a `POST /v1/chat/completions` body, as OpenAI's API reference and the openai
 * SDK's `ChatCompletionCreateParamsBase` describe it. Messages and content parts are validated one
 * by one (decode-messages.ts, decode-content.ts) so errors name the exact part.
 * @see https://platform.openai.com/docs/api-reference/chat/create
 */

const jsonObject = (message: string) =>
  v.custom<Record<string, unknown>>((input) => asObject(input) !== undefined, message);
const NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const NAME_RULE = 'must be 1 to 64 letters, digits, underscores or dashes';

/** OpenAI takes at most four stop sequences. */
export const MAX_STOP_SEQUENCES = 4;

export const RequestSchema = v.looseObject({
  model: nonEmptyText(),
  messages: v.pipe(
    v.array(v.unknown(), 'must be an array of messages'),
    v.nonEmpty('must contain at least one message'),
  ),
  stream: nullishBoolean(),
  temperature: v.nullish(numberBetween(0, 2)),
  top_p: v.nullish(numberBetween(0, 1)),
  max_tokens: v.nullish(positiveInteger()),
  max_completion_tokens: v.nullish(positiveInteger()),
  n: v.nullish(positiveInteger()),
  stop: v.nullish(
    v.union(
      [
        v.string(),
        v.pipe(
          v.array(v.string()),
          v.maxLength(MAX_STOP_SEQUENCES, `must have at most ${MAX_STOP_SEQUENCES} sequences`),
        ),
      ],
      'must be a string or an array of strings',
    ),
  ),
  tools: v.nullish(v.array(v.unknown(), 'must be an array')),
  tool_choice: v.nullish(v.unknown()),
  parallel_tool_calls: nullishBoolean(),
  response_format: v.nullish(v.unknown()),
  user: v.nullish(text()),
  stream_options: v.nullish(v.looseObject({ include_usage: nullishBoolean() }, 'must be an object')),
});

export const MessageSchema = v.looseObject(
  {
    role: v.picklist(
      ['system', 'developer', 'user', 'assistant', 'tool', 'function'],
      'must be one of system, developer, user, assistant, tool',
    ),
  },
  'must be a message object',
);

const content = v.union([v.string(), v.array(v.unknown())], 'must be a string or an array of content parts');

/** system, developer and user messages. */
export const ContentMessageSchema = v.looseObject({ content, name: v.nullish(text()) });

export const AssistantMessageSchema = v.looseObject({
  content: v.nullish(content),
  refusal: v.nullish(text()),
  tool_calls: v.nullish(v.array(v.unknown(), 'must be an array of tool calls')),
  name: v.nullish(text()),
});

export const ToolMessageSchema = v.looseObject({ tool_call_id: nonEmptyText(), content });

export const PartTypeSchema = v.looseObject({ type: text() }, 'must be a content part object');
export const TextPartSchema = v.looseObject({ text: text() });
export const RefusalPartSchema = v.looseObject({ refusal: text() });
export const ImageUrlSchema = v.looseObject(
  {
    url: nonEmptyText(),
    detail: v.nullish(v.picklist(['auto', 'low', 'high'], 'must be one of auto, low, high')),
  },
  'must be an object with a url',
);

export const ToolCallSchema = v.looseObject(
  {
    id: nonEmptyText(),
    type: v.nullish(v.literal('function', 'only function tool calls are supported')),
    function: v.looseObject({ name: nonEmptyText(), arguments: text() }, 'must be an object'),
  },
  'must be a tool call object',
);

export const ToolSchema = v.looseObject(
  {
    type: v.literal('function', 'only function tools are supported'),
    function: v.looseObject(
      {
        name: v.pipe(text(), v.regex(NAME, NAME_RULE)),
        description: v.nullish(text()),
        parameters: v.nullish(jsonObject('must be a JSON Schema object')),
        strict: nullishBoolean(),
      },
      'must be an object',
    ),
  },
  'must be a tool object',
);

export const NamedToolChoiceSchema = v.looseObject(
  {
    type: v.literal('function', 'must be "function"'),
    function: v.looseObject({ name: nonEmptyText() }, 'must be an object'),
  },
  'must be "none", "auto", "required" or {"type": "function", "function": {"name": …}}',
);

export const JsonSchemaSchema = v.looseObject(
  {
    name: v.pipe(text(), v.regex(NAME, NAME_RULE)),
    schema: jsonObject('must be a JSON Schema object'),
    strict: nullishBoolean(),
    description: v.nullish(text()),
  },
  'must be an object',
);

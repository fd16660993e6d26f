/**
 * OpenAPI paths of the three LLM wire formats, Anthropic's count_tokens and OpenAI's embeddings.
 * Their bodies are the formats' own (OpenAI chat completions, Responses and embeddings, Anthropic
 * Messages), documented upstream; here the required fields and limits of the API contract's
 * tables, and the error shapes each endpoint answers with.
 */
const json = (schema: unknown) => ({ 'application/json': { schema } });
const openAIError = { $ref: '#/components/schemas/OpenAIError' };
const anthropicError = {
  type: 'object',
  properties: {
    type: { const: 'error' },
    error: { type: 'object', properties: { type: { type: 'string' }, message: { type: 'string' } } },
  },
};
const answers = (description: string, error: unknown) => ({
  200: { description, content: { ...json({ type: 'object' }), 'text/event-stream': { schema: { type: 'string' } } } },
  ...Object.fromEntries(
    [400, 401, 402, 404, 429, 500, 502, 504].map((s) => [
      String(s),
      { description: `error ${s}`, content: json(error) },
    ]),
  ),
});
const temperature = (max: number) => ({ type: 'number', minimum: 0, maximum: max });
const toolChoice = { oneOf: [{ enum: ['none', 'auto', 'required'] }, { type: 'object' }] };

export const llmOpenApiPaths: Record<string, unknown> = {
  '/v1/chat/completions': {
    post: {
      summary: 'Chat completion (OpenAI wire format), any catalog LLM',
      externalDocs: { url: 'https://platform.openai.com/docs/api-reference/chat/create' },
      requestBody: {
        required: true,
        content: json({
          type: 'object',
          required: ['model', 'messages'],
          properties: {
            model: { type: 'string' },
            messages: { type: 'array' },
            stream: { type: 'boolean' },
            temperature: temperature(2),
            max_tokens: { type: 'integer' },
            top_p: { type: 'number' },
            stop: { oneOf: [{ type: 'string' }, { type: 'array', maxItems: 4 }] },
            tools: { type: 'array' },
            tool_choice: toolChoice,
            response_format: { type: 'object' },
          },
        }),
      },
      responses: answers('chat.completion, or chat.completion.chunk events', openAIError),
    },
  },
  '/v1/responses': {
    post: {
      summary: 'Response (OpenAI Responses wire format), any catalog LLM',
      externalDocs: { url: 'https://platform.openai.com/docs/api-reference/responses/create' },
      requestBody: {
        required: true,
        content: json({
          type: 'object',
          required: ['model', 'input'],
          properties: {
            model: { type: 'string' },
            input: { oneOf: [{ type: 'string' }, { type: 'array' }] },
            instructions: { type: 'string' },
            stream: { type: 'boolean' },
            temperature: temperature(2),
            max_output_tokens: { type: 'integer' },
            tools: { type: 'array' },
            tool_choice: toolChoice,
            previous_response_id: { type: 'string' },
            store: { type: 'boolean', default: true },
          },
        }),
      },
      responses: answers('response, or response.* events', openAIError),
    },
  },
  '/v1/responses/{response_id}': {
    get: {
      summary: 'A stored response of this account',
      parameters: [{ name: 'response_id', in: 'path', required: true, schema: { type: 'string' } }],
      responses: {
        200: { description: 'response', content: json({ type: 'object' }) },
        404: { description: 'not found', content: json(openAIError) },
      },
    },
  },
  '/v1/messages': {
    post: {
      summary: 'Message (Anthropic Messages wire format), any catalog LLM; also accepts x-api-key',
      externalDocs: { url: 'https://docs.anthropic.com/en/api/messages' },
      requestBody: {
        required: true,
        content: json({
          type: 'object',
          required: ['model', 'max_tokens', 'messages'],
          properties: {
            model: { type: 'string' },
            max_tokens: { type: 'integer' },
            messages: { type: 'array' },
            system: { oneOf: [{ type: 'string' }, { type: 'array' }] },
            stream: { type: 'boolean' },
            temperature: temperature(1),
            top_p: { type: 'number' },
            stop_sequences: { type: 'array' },
            tools: { type: 'array' },
            tool_choice: { type: 'object' },
          },
        }),
      },
      responses: answers('message, or message_* events', anthropicError),
    },
  },
  '/v1/messages/count_tokens': {
    post: {
      summary:
        'Input tokens of a Messages request, any catalog LLM (free); Anthropic upstreams count, others the gateway',
      externalDocs: { url: 'https://docs.anthropic.com/en/api/messages-count-tokens' },
      requestBody: {
        required: true,
        content: json({
          type: 'object',
          required: ['model', 'messages'],
          properties: {
            model: { type: 'string' },
            messages: { type: 'array' },
            system: { oneOf: [{ type: 'string' }, { type: 'array' }] },
            tools: { type: 'array' },
            tool_choice: { type: 'object' },
          },
        }),
      },
      responses: {
        200: {
          description: 'the count',
          content: json({
            type: 'object',
            required: ['input_tokens'],
            properties: { input_tokens: { type: 'integer', minimum: 0 } },
          }),
        },
        ...Object.fromEntries(
          [400, 401, 404, 429, 500, 502, 504].map((s) => [
            String(s),
            { description: `error ${s}`, content: json(anthropicError) },
          ]),
        ),
      },
    },
  },
  '/v1/embeddings': {
    post: {
      summary: 'Embeddings (OpenAI wire format) for models of category embedding; charged per input token',
      externalDocs: { url: 'https://platform.openai.com/docs/api-reference/embeddings/create' },
      requestBody: {
        required: true,
        content: json({
          type: 'object',
          required: ['model', 'input'],
          properties: {
            model: { type: 'string' },
            input: {
              oneOf: [
                { type: 'string', minLength: 1 },
                { type: 'array', items: { type: 'string', minLength: 1 }, minItems: 1, maxItems: 2048 },
                { type: 'array', items: { type: 'integer', minimum: 0 }, minItems: 1 },
                {
                  type: 'array',
                  items: { type: 'array', items: { type: 'integer', minimum: 0 }, minItems: 1 },
                  minItems: 1,
                  maxItems: 2048,
                },
              ],
            },
            encoding_format: { enum: ['float', 'base64'], default: 'float' },
            dimensions: { type: 'integer', minimum: 1 },
            user: { type: 'string' },
          },
        }),
      },
      responses: {
        200: {
          description: 'list of embeddings; base64 is little-endian float32',
          content: json({
            type: 'object',
            properties: {
              object: { const: 'list' },
              data: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: {
                    object: { const: 'embedding' },
                    index: { type: 'integer' },
                    embedding: { oneOf: [{ type: 'array', items: { type: 'number' } }, { type: 'string' }] },
                  },
                },
              },
              model: { type: 'string' },
              usage: {
                type: 'object',
                properties: { prompt_tokens: { type: 'integer' }, total_tokens: { type: 'integer' } },
              },
            },
          }),
        },
        ...Object.fromEntries(
          [400, 401, 402, 404, 429, 500, 502, 504].map((s) => [
            String(s),
            { description: `error ${s}`, content: json(openAIError) },
          ]),
        ),
      },
    },
  },
};

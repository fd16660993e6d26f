/**
 * OpenAPI paths of the three LLM wire formats. Their bodies are the formats' own (OpenAI chat
 * completions and Responses, Anthropic Messages), documented upstream; here the required fields
 * and limits of the API contract's tables, and the error shapes each endpoint answers with.
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
};

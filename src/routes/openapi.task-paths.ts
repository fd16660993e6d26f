/** OpenAPI paths of tasks (docs/api-contract.md) and stored files. */
const json = (schema: unknown) => ({ 'application/json': { schema } });
const envelope = (data: unknown) => ({
  type: 'object',
  required: ['success', 'code', 'data'],
  properties: { success: { type: 'boolean' }, code: { type: 'integer' }, data },
});
const errorEnvelope = { $ref: '#/components/schemas/ErrorEnvelope' };
const errors = (...codes: number[]) =>
  Object.fromEntries(codes.map((c) => [String(c), { description: `error ${c}`, content: json(errorEnvelope) }]));
const attempt = {
  type: 'object',
  properties: { sent_at: { type: 'integer' }, status: { type: 'integer' }, status_text: { type: 'string' } },
};
const task = {
  type: 'object',
  properties: {
    task_id: { type: 'string' },
    model: { type: 'string' },
    category: { type: ['string', 'null'] },
    status: { enum: ['processing', 'completed', 'failed'] },
    cost: { type: 'number' },
    created_at: { type: 'integer' },
    input: { type: 'object' },
    output: { type: ['object', 'null'] },
    callback_url: { type: ['string', 'null'] },
    callback_result: { type: ['array', 'null'], items: attempt },
    error_message: { type: 'string' },
  },
};
const created = envelope({
  oneOf: [
    { type: 'object', properties: { task_id: { type: 'string' }, status: { const: 'processing' } } },
    { type: 'object', properties: { cost: { type: 'number' } } },
  ],
});
const idempotencyKey = {
  name: 'Idempotency-Key',
  in: 'header',
  schema: { type: 'string', maxLength: 255 },
  description: 'same key and body within 24 h: the same task, charged once',
};
const taskId = { name: 'task_id', in: 'path', required: true, schema: { type: 'string' } };
const query = (name: string, schema: unknown, description?: string) => ({ name, in: 'query', schema, description });

export const taskOpenApiPaths: Record<string, unknown> = {
  '/v1/tasks': {
    post: {
      summary: 'Create a media task (or price it with dry_run)',
      parameters: [idempotencyKey],
      requestBody: {
        required: true,
        content: json({
          type: 'object',
          required: ['model', 'input'],
          properties: {
            model: { type: 'string' },
            input: { type: 'object' },
            callback_url: { type: 'string', format: 'uri' },
            dry_run: { type: 'boolean' },
          },
        }),
      },
      responses: {
        200: { description: 'task created, or its price', content: json(created) },
        ...errors(401, 402, 422, 429),
      },
    },
    get: {
      summary: 'List tasks, newest first',
      parameters: [
        query('page', { type: 'integer', minimum: 1, default: 1 }),
        query('page_size', { enum: [10, 25, 50, 100], default: 25 }, 'any other value becomes 25'),
        query('status', { enum: ['processing', 'completed', 'failed'] }),
        query('model', { type: 'string' }),
        query('category', { type: 'string' }, 'comma list of llm, embedding, video, image, audio'),
        query('provider', { type: 'string' }, 'comma list of provider slugs'),
        query('created_after', { type: 'integer' }, 'Unix seconds, inclusive'),
        query('created_before', { type: 'integer' }, 'Unix seconds, inclusive; >= created_after'),
      ],
      responses: {
        200: {
          description: 'tasks and pagination',
          content: json({
            allOf: [
              envelope({ type: 'array', items: task }),
              { type: 'object', properties: { pagination: { type: 'object' } } },
            ],
          }),
        },
        ...errors(401, 422),
      },
    },
  },
  '/v1/tasks/{task_id}': {
    get: {
      summary: 'One task',
      parameters: [taskId],
      responses: { 200: { description: 'task', content: json(envelope(task)) }, ...errors(401, 404) },
    },
  },
  '/v1/tasks/{task_id}/callbacks/redeliver': {
    post: {
      summary: 'Send the callback once more (the log holds at most 10 attempts)',
      parameters: [taskId],
      responses: {
        200: { description: 'the new log entry', content: json(envelope(attempt)) },
        ...errors(401, 404, 409, 422),
      },
    },
  },
  '/{model_slug}/generate': {
    post: {
      summary:
        'Legacy per-model creation: the model id with / as - (sandbox-image), or the bare model name when unique',
      parameters: [{ name: 'model_slug', in: 'path', required: true, schema: { type: 'string' } }, idempotencyKey],
      requestBody: {
        required: true,
        content: json({
          type: 'object',
          description: "the model's input fields, with callback_url and dry_run beside them",
        }),
      },
      responses: { 200: { description: 'task created', content: json(created) }, ...errors(401, 402, 404, 422) },
    },
  },
  '/v1/account/spend': {
    get: {
      summary: 'USD spent per UTC day and category (charges minus refunds), oldest first',
      parameters: [query('days', { type: 'integer', minimum: 1, maximum: 366, default: 30 })],
      responses: {
        200: {
          description: 'spend',
          content: json(
            envelope({
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  day: { type: 'string', format: 'date' },
                  llm: { type: 'number' },
                  image: { type: 'number' },
                  video: { type: 'number' },
                  audio: { type: 'number' },
                },
              },
            }),
          ),
        },
        ...errors(401, 422),
      },
    },
  },
  '/upload': {
    put: {
      summary:
        'Store a file ({upload_url}/upload): JSON {base64} (raw or data URI), JSON {file_url}, or multipart field `file`',
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: {
              oneOf: [
                { type: 'object', required: ['base64'], properties: { base64: { type: 'string' } } },
                { type: 'object', required: ['file_url'], properties: { file_url: { type: 'string', format: 'uri' } } },
              ],
            },
          },
          'multipart/form-data': {
            schema: { type: 'object', required: ['file'], properties: { file: { type: 'string', format: 'binary' } } },
          },
        },
      },
      responses: {
        200: {
          description: 'stored',
          content: json({ type: 'object', properties: { success: { const: true }, file_url: { type: 'string' } } }),
        },
        ...errors(401, 413, 415, 422, 429),
      },
    },
  },
  '/files/{file}': {
    get: {
      summary: 'A stored file (task output or upload); the unguessable name is the capability, no key needed',
      security: [],
      parameters: [
        { name: 'file', in: 'path', required: true, schema: { type: 'string' } },
        { name: 'Range', in: 'header', schema: { type: 'string' } },
      ],
      responses: {
        200: { description: 'the bytes' },
        206: { description: 'a range' },
        304: { description: 'not modified' },
        404: { description: 'no such file' },
        416: { description: 'range not satisfiable' },
      },
    },
  },
};

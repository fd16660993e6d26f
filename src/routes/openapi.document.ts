/**
 * The OpenAPI 3.1 description served at `/openapi.json`. Written by hand from docs/api-contract.md so it
 * documents the contract rather than whatever the code happens to accept; each feature adds its paths.
 */
const envelope = (data: Record<string, unknown>) => ({
  type: 'object',
  required: ['success', 'code', 'data'],
  properties: { success: { type: 'boolean' }, code: { type: 'integer' }, data },
});
const errorEnvelope = { $ref: '#/components/schemas/ErrorEnvelope' };
const ok = (description: string, schema: unknown) => ({ description, content: { 'application/json': { schema } } });
const errors = (...codes: number[]) =>
  Object.fromEntries(codes.map((c) => [String(c), ok(`error ${c}`, errorEnvelope)]));
const jsonBody = (schema: unknown) => ({ required: true, content: { 'application/json': { schema } } });

const account = {
  type: 'object',
  properties: {
    user_id: { type: 'integer' },
    email: { type: 'string' },
    balance_usd: { type: 'number' },
    created_at: { type: 'integer' },
    updated_at: { type: 'integer' },
  },
};
const signing = { type: 'object', properties: { enabled: { type: 'boolean' }, secret: { type: ['string', 'null'] } } };

export const openApiPaths: Record<string, unknown> = {
  '/healthz': { get: { summary: 'Liveness', security: [], responses: { 200: ok('alive', { type: 'object' }) } } },
  '/readyz': {
    get: {
      summary: 'Readiness (database and store)',
      security: [],
      responses: { 200: ok('ready', { type: 'object' }), 503: ok('not ready', { type: 'object' }) },
    },
  },
  '/v1/models': {
    get: {
      summary: 'List models',
      parameters: [
        {
          name: 'category',
          in: 'query',
          schema: { type: 'string' },
          description: 'comma list of llm, video, image, audio',
        },
      ],
      responses: {
        200: ok('model list', { $ref: '#/components/schemas/ModelList' }),
        400: ok('invalid_category', { $ref: '#/components/schemas/OpenAIError' }),
      },
    },
  },
  '/v1/models/{model_id}': {
    get: {
      summary: 'One model by exact id, or a provider slug for its models',
      parameters: [{ name: 'model_id', in: 'path', required: true, schema: { type: 'string' } }],
      responses: {
        200: ok('model or list', {
          oneOf: [{ $ref: '#/components/schemas/Model' }, { $ref: '#/components/schemas/ModelList' }],
        }),
        404: ok('model_not_found', { $ref: '#/components/schemas/OpenAIError' }),
      },
    },
  },
  '/v1/routing': {
    get: {
      summary: "Each model's deployments and their shared health (ok, degraded, cooling_down)",
      responses: { 200: ok('deployments by model', envelope({ type: 'object' })), ...errors(401) },
    },
  },
  '/v1/account': { get: { summary: 'Account', responses: { 200: ok('account', envelope(account)), ...errors(401) } } },
  '/account': {
    get: { summary: 'Account (legacy alias)', responses: { 200: ok('account', envelope(account)), ...errors(401) } },
  },
  '/v1/account/api-key/regenerate': {
    post: {
      summary: 'Regenerate the API key; the old one stops at once',
      responses: {
        200: ok('new key', envelope({ type: 'object', properties: { api_key: { type: 'string' } } })),
        ...errors(401),
      },
    },
  },
  '/v1/account/webhook-signing': {
    get: { summary: 'Webhook signing state', responses: { 200: ok('signing', envelope(signing)), ...errors(401) } },
    post: {
      summary: 'Enable or disable webhook signing',
      requestBody: jsonBody({ type: 'object', required: ['enabled'], properties: { enabled: { type: 'boolean' } } }),
      responses: { 200: ok('signing', envelope(signing)), ...errors(401, 422) },
    },
  },
  '/v1/account/webhook-signing/reset': {
    post: { summary: 'New signing secret', responses: { 200: ok('signing', envelope(signing)), ...errors(401) } },
  },
  '/admin/accounts': {
    post: {
      summary: 'Create an account (admin token)',
      requestBody: jsonBody({
        type: 'object',
        required: ['email'],
        properties: { email: { type: 'string' }, balance_usd: { type: 'number' } },
      }),
      responses: {
        200: ok(
          'created',
          envelope({
            type: 'object',
            properties: { user_id: { type: 'integer' }, email: { type: 'string' }, api_key: { type: 'string' } },
          }),
        ),
        ...errors(401, 409, 422),
      },
    },
  },
  '/admin/accounts/{user_id}': {
    get: {
      summary: 'Show an account (admin token)',
      parameters: [{ name: 'user_id', in: 'path', required: true, schema: { type: 'integer' } }],
      responses: { 200: ok('account', envelope(account)), ...errors(401, 404) },
    },
  },
  '/admin/accounts/{user_id}/topup': {
    post: {
      summary: 'Top up (admin token)',
      parameters: [{ name: 'user_id', in: 'path', required: true, schema: { type: 'integer' } }],
      requestBody: jsonBody({
        type: 'object',
        required: ['amount_usd'],
        properties: { amount_usd: { type: 'number' } },
      }),
      responses: { 200: ok('account', envelope(account)), ...errors(401, 404, 422) },
    },
  },
};

export function openApiDocument(extraPaths: Record<string, unknown> = {}) {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Generation Gateway',
      version: '0.1.0',
      description: 'Tasks, LLM text in three wire formats, catalog, account, resources and file storage.',
    },
    security: [{ bearer: [] }],
    paths: { ...openApiPaths, ...extraPaths },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: {
        ErrorEnvelope: envelope({ type: 'object', properties: { message: { type: 'string' } } }),
        OpenAIError: {
          type: 'object',
          properties: {
            error: {
              type: 'object',
              properties: { message: { type: 'string' }, type: { type: 'string' }, code: { type: 'string' } },
            },
          },
        },
        Model: {
          type: 'object',
          required: ['id', 'object', 'created', 'added', 'owned_by', 'display_name', 'category'],
          properties: {
            id: { type: 'string' },
            object: { const: 'model' },
            created: { type: 'integer' },
            added: { type: 'integer' },
            owned_by: { type: 'string' },
            provider_display: { type: 'string' },
            display_name: { type: 'string' },
            category: { enum: ['audio', 'image', 'video', 'llm'] },
            context_length: { type: 'integer' },
            max_output: { type: 'integer' },
          },
        },
        ModelList: {
          type: 'object',
          properties: {
            object: { const: 'list' },
            data: { type: 'array', items: { $ref: '#/components/schemas/Model' } },
          },
        },
      },
    },
  };
}

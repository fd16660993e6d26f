import { accountOpenApiPaths } from './account-paths.ts';
import { jsonSchema } from './json-schema.ts';
import { keyOpenApiPaths } from './key-paths.ts';
import { llmOpenApiPaths } from './llm-paths.ts';
import { resourceOpenApiPaths } from './resource-paths.ts';
import { ErrorEnvelope, ModelList, ModelObject, OpenAIError } from './shapes.ts';
import { taskOpenApiPaths } from './task-paths.ts';
import { taskWebhooks } from './webhook-paths.ts';

/**
 * The OpenAPI 3.1 description served at `/openapi.json`, generated from the valibot schemas the
 * routes validate with (requests) and the shapes of shapes.ts (answers). Built once at start.
 */
export function openApiDocument() {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Generation Gateway',
      version: '0.1.0',
      description: 'Tasks, LLM text in three wire formats, catalog, account, resources and file storage.',
    },
    security: [{ bearer: [] }],
    paths: {
      ...accountOpenApiPaths,
      ...keyOpenApiPaths,
      ...llmOpenApiPaths,
      ...taskOpenApiPaths,
      ...resourceOpenApiPaths,
    },
    webhooks: taskWebhooks,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: {
        ErrorEnvelope: jsonSchema(ErrorEnvelope),
        OpenAIError: jsonSchema(OpenAIError),
        Model: jsonSchema(ModelObject),
        ModelList: jsonSchema(ModelList),
      },
    },
  };
}

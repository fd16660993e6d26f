import { Elysia } from 'elysia';
import type { AppContext } from '../app/context.ts';
import { authPlugin } from '../auth/auth-plugin.ts';
import type { EmbeddingService } from '../embeddings/embedding-service.ts';
import { llmAuthErrors } from './llm.routes.ts';

/** `POST /v1/embeddings` in OpenAI's wire format and error shape (docs/api-contract.md). */
export function embeddingRoutes(ctx: AppContext, service: EmbeddingService) {
  return new Elysia({ name: 'embeddings', prefix: '/v1' })
    .use(authPlugin(ctx, { errors: llmAuthErrors('openai') }))
    .post('/embeddings', ({ auth, body, request }) => service.handle(body, auth, request));
}

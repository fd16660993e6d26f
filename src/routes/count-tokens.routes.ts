import { Elysia } from 'elysia';
import type { AppContext } from '../app/context.ts';
import { authPlugin } from '../auth/auth-plugin.ts';
import type { TokenCountService } from '../llm/count-tokens.ts';
import { llmAuthErrors } from './llm.routes.ts';

/**
 * `POST /v1/messages/count_tokens` in Anthropic's wire format and error shape, with the key as
 * a bearer token or `x-api-key` like `/v1/messages` (docs/api-contract.md).
 */
export function countTokensRoutes(ctx: AppContext, service: TokenCountService) {
  return new Elysia({ name: 'count-tokens', prefix: '/v1' })
    .use(authPlugin(ctx, { errors: llmAuthErrors('anthropic'), allowXApiKey: true }))
    .post('/messages/count_tokens', ({ auth, body, request }) => service.handle(body, auth, request));
}

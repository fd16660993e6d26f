import { Elysia } from 'elysia';
import type { AppContext } from '../app/context.ts';
import { authPlugin, type AuthErrors } from '../auth/auth-plugin.ts';
import type { ErrorShaper } from '../http/error-handler.ts';
import { anthropicMessagesFormat } from '../llm/formats/anthropic-messages-format.ts';
import { chatCompletionsFormat } from '../llm/formats/chat-completions-format.ts';
import { responsesFormat } from '../llm/formats/responses-format.ts';
import { LlmError, kindForStatus, type ErrorFamily } from '../llm/llm-error.ts';
import type { LlmService } from '../llm/llm-service.ts';
import { loadResponse } from '../llm/llm-responses.repository.ts';
import { resolveItemReferences } from '../llm/resolve-item-references.ts';

/** Authentication refusals in an LLM family's error shape (also used by the embeddings and count_tokens routes). */
export function llmAuthErrors(family: ErrorFamily): AuthErrors {
  return {
    unauthorized: () => new LlmError(family, 'authentication', 'invalid or missing API key', null, 'invalid_api_key'),
    rateLimited: (retryAfter) => {
      const err = new LlmError(family, 'rate_limit', 'rate limit exceeded', null, 'rate_limit_exceeded');
      err.headers['retry-after'] = String(Math.max(1, Math.ceil(retryAfter)));
      return err;
    },
  };
}

/** Bad JSON, unknown sub-routes and crashes on LLM paths answer in the path's own error shape. */
export const llmErrorShapers: Array<{ prefix: string; shape: ErrorShaper }> = [
  {
    prefix: '/v1/messages',
    shape: (status, message) =>
      new LlmError(
        'anthropic',
        kindForStatus(status === 422 ? 400 : status),
        message,
        null,
        null,
        status === 422 ? 400 : status,
      ),
  },
  ...['/v1/chat/completions', '/v1/responses', '/v1/embeddings'].map((prefix) => ({
    prefix,
    shape: ((status, message) =>
      new LlmError(
        'openai',
        kindForStatus(status === 422 ? 400 : status),
        message,
        null,
        null,
        status === 422 ? 400 : status,
      )) as ErrorShaper,
  })),
];

/** The three LLM wire formats (docs/api-contract.md), plus reading back a stored response. */
export function llmRoutes(ctx: AppContext, service: LlmService) {
  const openai = new Elysia({ name: 'llm-openai', prefix: '/v1' })
    .use(authPlugin(ctx, { errors: llmAuthErrors('openai') }))
    .post('/chat/completions', ({ auth, body, request }) => service.handle(chatCompletionsFormat, body, auth, request))
    .post('/responses', async ({ auth, body, request }) =>
      service.handle(responsesFormat, await resolveItemReferences(ctx.db, auth.accountId, body), auth, request),
    )
    .get('/responses/:id', async ({ auth, params }) => {
      const stored = await loadResponse(ctx.db, auth.accountId, params.id);
      if (!stored)
        throw new LlmError(
          'openai',
          'not_found',
          `Response with id '${params.id}' not found.`,
          'response_id',
          'response_not_found',
        );
      return stored;
    });

  const anthropic = new Elysia({ name: 'llm-anthropic', prefix: '/v1' })
    .use(authPlugin(ctx, { errors: llmAuthErrors('anthropic'), allowXApiKey: true }))
    .post('/messages', ({ auth, body, request }) => service.handle(anthropicMessagesFormat, body, auth, request));

  return new Elysia().use(openai).use(anthropic);
}

import * as v from 'valibot';
import { RequestSchema as MessagesRequest } from '../../../translators/anthropic-messages/request-schema.ts';
import { RequestSchema as ChatRequest } from '../../../translators/chat-completions/request-schema.ts';
import { RequestSchema as EmbeddingsRequest } from '../../../translators/embeddings/decode-request.ts';
import { RequestSchema as ResponsesRequest } from '../../../translators/responses/decode-request.ts';
import type { Schema } from './json-schema.ts';
import { type OperationSpec, operation } from './operation.ts';
import { AnthropicError, AnyObject, EmbeddingList, OpenAIError } from './shapes.ts';

const LLM_ERRORS = [400, 401, 402, 404, 413, 429, 500, 502, 504];

/** JSON, or server-sent events when the body asks for `stream: true`; either in the format's own shape. */
const answers = (description: string): OperationSpec['ok'] => ({
  description,
  content: { 'application/json': AnyObject, 'text/event-stream': v.string() },
});

const llm = (summary: string, docs: string, body: Schema, answer: string, error: Schema) =>
  operation({ summary, externalDocs: docs, body, ok: answers(answer), errors: { shape: error, codes: LLM_ERRORS } });

/**
 * The three LLM wire formats. Their bodies are validated by the translators' own schemas (the
 * formats' fields the gateway reads; other fields pass through); answers are the formats' own.
 */
export const llmOpenApiPaths: Record<string, unknown> = {
  '/v1/chat/completions': {
    post: llm(
      'Chat completion (OpenAI wire format), any catalog LLM',
      'https://platform.openai.com/docs/api-reference/chat/create',
      ChatRequest,
      'chat.completion, or chat.completion.chunk events',
      OpenAIError,
    ),
  },
  '/v1/responses': {
    post: llm(
      'Response (OpenAI Responses wire format), any catalog LLM',
      'https://platform.openai.com/docs/api-reference/responses/create',
      ResponsesRequest,
      'response, or response.* events',
      OpenAIError,
    ),
  },
  '/v1/responses/{response_id}': {
    get: operation({
      summary: 'A stored response of this account',
      path: v.object({ response_id: v.string() }),
      ok: { description: 'response', schema: AnyObject },
      errors: { shape: OpenAIError, codes: [401, 404] },
    }),
  },
  '/v1/messages': {
    post: llm(
      'Message (Anthropic Messages wire format), any catalog LLM; also accepts x-api-key',
      'https://docs.anthropic.com/en/api/messages',
      MessagesRequest,
      'message, or message_* events',
      AnthropicError,
    ),
  },
  '/v1/messages/count_tokens': {
    post: operation({
      summary:
        'Input tokens of a Messages request, any catalog LLM (free); Anthropic upstreams count, others the gateway',
      externalDocs: 'https://docs.anthropic.com/en/api/messages-count-tokens',
      body: v.omit(MessagesRequest, ['max_tokens']),
      ok: {
        description: 'the count',
        schema: v.object({ input_tokens: v.pipe(v.number(), v.integer(), v.minValue(0)) }),
      },
      errors: { shape: AnthropicError, codes: [400, 401, 404, 413, 429, 500, 502, 504] },
    }),
  },
  '/v1/embeddings': {
    post: operation({
      summary: 'Embeddings (OpenAI wire format) for models of category embedding; charged per input token',
      externalDocs: 'https://platform.openai.com/docs/api-reference/embeddings/create',
      body: EmbeddingsRequest,
      ok: { description: 'list of embeddings; base64 is little-endian float32', schema: EmbeddingList },
      errors: { shape: OpenAIError, codes: LLM_ERRORS },
    }),
  },
};

import * as v from 'valibot';
import { SigningBody } from '../account.routes.ts';
import { AccountId, CreateAccountBody, TopupBody } from '../admin.routes.ts';
import { SpendQuery } from '../dashboard.routes.ts';
import { operation } from './operation.ts';
import {
  Account,
  DeploymentState,
  envelope,
  ErrorEnvelope,
  ModelList,
  ModelObject,
  OpenAIError,
  Signing,
  SpendDay,
} from './shapes.ts';

const errors = (...codes: number[]) => ({ shape: ErrorEnvelope, codes });
const UserId = v.object({ user_id: AccountId });
const ModelsQuery = v.object({
  category: v.optional(v.pipe(v.string(), v.description('comma list of llm, embedding, video, image, audio'))),
});
const Health = v.record(v.string(), v.unknown());
const account = { description: 'account', schema: envelope(Account) };
const signing = { description: 'signing', schema: envelope(Signing) };

/** Health, the catalog, the account's self-service calls and the admin API. */
export const accountOpenApiPaths: Record<string, unknown> = {
  '/healthz': { get: operation({ summary: 'Liveness', public: true, ok: { description: 'alive', schema: Health } }) },
  '/readyz': {
    get: operation({
      summary: 'Readiness (database and store)',
      public: true,
      ok: { 200: { description: 'ready', schema: Health }, 503: { description: 'not ready', schema: Health } },
    }),
  },
  '/metrics': {
    get: operation({
      summary: 'Prometheus metrics (text exposition format)',
      description:
        'Open when METRICS_TOKEN is unset; otherwise it takes `Authorization: Bearer <METRICS_TOKEN>` (not an API key).',
      public: true,
      ok: { description: 'the metrics', content: { 'text/plain; version=0.0.4; charset=utf-8': undefined } },
      errors: { shape: ErrorEnvelope, codes: [401] },
    }),
  },
  '/v1/models': {
    get: operation({
      summary: 'List models',
      query: ModelsQuery,
      ok: { description: 'model list', schema: ModelList },
      errors: { shape: OpenAIError, codes: [400] },
    }),
  },
  '/v1/models/{model_id}': {
    get: operation({
      summary: 'One model by exact id, or a provider slug for its models',
      path: v.object({ model_id: v.string() }),
      ok: { description: 'model or list', schema: v.union([ModelObject, ModelList]) },
      errors: { shape: OpenAIError, codes: [404] },
    }),
  },
  '/v1/routing': {
    get: operation({
      summary: "Each model's deployments and their shared health (ok, degraded, cooling_down)",
      ok: { description: 'deployments by model', schema: envelope(v.record(v.string(), v.array(DeploymentState))) },
      errors: errors(401),
    }),
  },
  '/v1/account': { get: operation({ summary: 'Account', ok: account, errors: errors(401) }) },
  '/account': { get: operation({ summary: 'Account (legacy alias)', ok: account, errors: errors(401) }) },
  '/v1/account/api-key/regenerate': {
    post: operation({
      summary: 'Regenerate the API key; the old one stops at once',
      ok: { description: 'new key', schema: envelope(v.object({ api_key: v.string() })) },
      errors: errors(401, 403),
    }),
  },
  '/v1/account/webhook-signing': {
    get: operation({ summary: 'Webhook signing state', ok: signing, errors: errors(401, 403) }),
    post: operation({
      summary: 'Enable or disable webhook signing',
      body: SigningBody,
      ok: signing,
      errors: errors(401, 403, 422),
    }),
  },
  '/v1/account/webhook-signing/reset': {
    post: operation({ summary: 'New signing secret', ok: signing, errors: errors(401, 403) }),
  },
  '/v1/account/spend': {
    get: operation({
      summary: 'USD spent per UTC day and category (charges minus refunds), oldest first',
      query: SpendQuery,
      ok: { description: 'spend', schema: envelope(v.array(SpendDay)) },
      errors: errors(401, 422),
    }),
  },
  '/admin/accounts': {
    post: operation({
      summary: 'Create an account (admin token)',
      body: CreateAccountBody,
      ok: {
        description: 'created',
        schema: envelope(v.object({ user_id: v.number(), email: v.string(), api_key: v.string() })),
      },
      errors: errors(401, 409, 422),
    }),
  },
  '/admin/accounts/{user_id}': {
    get: operation({ summary: 'Show an account (admin token)', path: UserId, ok: account, errors: errors(401, 404) }),
  },
  '/admin/accounts/{user_id}/topup': {
    post: operation({
      summary: 'Top up (admin token)',
      path: UserId,
      headers: [
        {
          name: 'Idempotency-Key',
          in: 'header',
          schema: { type: 'string', minLength: 1, maxLength: 255 },
          description: 'credited once per account and key; a retry answers with idempotent-replayed: true',
        },
      ],
      body: TopupBody,
      ok: account,
      errors: errors(401, 404, 422),
    }),
  },
};

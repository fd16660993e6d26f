import * as v from 'valibot';
import { AccountId } from '../admin.routes.ts';
import { SpendQuery } from '../dashboard.routes.ts';
import { CreateKeyBody, KeyIdParam, UpdateKeyBody } from '../../keys/key-settings.ts';
import { operation } from './operation.ts';
import { envelope, ErrorEnvelope } from './shapes.ts';

const errors = (...codes: number[]) => ({ shape: ErrorEnvelope, codes });
const int = () => v.pipe(v.number(), v.integer());
const unixOrNull = () => v.nullable(v.pipe(int(), v.description('Unix seconds')));

/** A key as listed (docs/keys.md): never the key itself. */
export const KeyObject = v.object({
  id: int(),
  name: v.string(),
  key_prefix: v.string(),
  created_at: v.pipe(int(), v.description('Unix seconds')),
  last_used_at: unixOrNull(),
  expires_at: unixOrNull(),
  budget_usd: v.nullable(v.number()),
  budget_period: v.nullable(v.picklist(['day', 'week', 'month'])),
  models: v.nullable(v.array(v.string())),
  rpm: v.nullable(int()),
  tpm: v.nullable(int()),
  spend_usd: v.pipe(v.number(), v.description('spent in the current budget period (lifetime without one)')),
  period_start: unixOrNull(),
});
const CreatedKey = v.object({ ...KeyObject.entries, key: v.pipe(v.string(), v.description('shown this once')) });
const Revoked = v.object({ id: int(), revoked: v.literal(true) });
const KeyPath = v.object({ id: KeyIdParam });
const AdminKeyPath = v.object({ user_id: AccountId, key_id: KeyIdParam });
const UserId = v.object({ user_id: AccountId });

const list = { description: 'the account’s active keys', schema: envelope(v.array(KeyObject)) };
const created = { description: 'the new key, shown once', schema: envelope(CreatedKey) };
const one = { description: 'the key', schema: envelope(KeyObject) };
const revoked = { description: 'revoked on every instance', schema: envelope(Revoked) };

const Breakdown = v.object({
  by_key: v.optional(
    v.array(v.object({ key_id: v.nullable(int()), name: v.nullable(v.string()), spend_usd: v.number(), calls: int() })),
  ),
  by_model: v.optional(v.array(v.object({ model: v.string(), spend_usd: v.number(), calls: int() }))),
});

/** The account's API keys (self-service and admin). */
export const keyOpenApiPaths: Record<string, unknown> = {
  '/v1/account/spend/breakdown': {
    get: operation({
      summary: 'USD spent per API key and per model over the last `days` UTC days (final costs)',
      query: SpendQuery,
      ok: { description: 'spend', schema: envelope(Breakdown) },
      errors: errors(401, 422),
    }),
  },
  '/v1/keys': {
    get: operation({ summary: 'List the account’s API keys with their spend', ok: list, errors: errors(401) }),
    post: operation({ summary: 'Create an API key', body: CreateKeyBody, ok: created, errors: errors(401, 403, 422) }),
  },
  '/v1/keys/{id}': {
    get: operation({ summary: 'One API key', path: KeyPath, ok: one, errors: errors(401, 404, 422) }),
    patch: operation({
      summary: 'Change an API key’s settings (null clears one)',
      path: KeyPath,
      body: UpdateKeyBody,
      ok: one,
      errors: errors(401, 403, 404, 409, 422),
    }),
    delete: operation({ summary: 'Revoke an API key', path: KeyPath, ok: revoked, errors: errors(401, 403, 404, 422) }),
  },
  '/admin/accounts/{user_id}/keys': {
    get: operation({
      summary: 'An account’s API keys (admin token)',
      path: UserId,
      ok: list,
      errors: errors(401, 404),
    }),
    post: operation({
      summary: 'Create an API key for an account (admin token)',
      path: UserId,
      body: CreateKeyBody,
      ok: created,
      errors: errors(401, 404, 422),
    }),
  },
  '/admin/accounts/{user_id}/keys/{key_id}': {
    patch: operation({
      summary: 'Change an account’s API key (admin token)',
      path: AdminKeyPath,
      body: UpdateKeyBody,
      ok: one,
      errors: errors(401, 404, 422),
    }),
    delete: operation({
      summary: 'Revoke an account’s API key (admin token)',
      path: AdminKeyPath,
      ok: revoked,
      errors: errors(401, 404, 422),
    }),
  },
};

import { Elysia } from 'elysia';
import * as v from 'valibot';
import type { AppContext } from '../app/context.ts';
import { issueApiKey, setWebhookSigning, toAccountView } from '../accounts/accounts.repository.ts';
import type { AccountRow } from '../db/tables/accounts.table.ts';
import { authPlugin } from '../auth/auth-plugin.ts';
import { envelope } from '../http/envelope.ts';
import { noStore } from '../http/no-store.ts';
import { notFound } from '../http/errors.ts';
import { parseOr422 } from '../http/parse.ts';
import { unlimitedKeyOnly } from '../keys/unlimited-key-only.ts';
import { standardSecret } from '../webhooks/webhook-signature.ts';

export const SigningBody = v.object({ enabled: v.boolean() });

/** 64 lowercase hex characters (32 random bytes), as the API contract's signing secret. */
export function newSigningSecret(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex');
}

/** `standard_secret` is the same secret for Standard Webhooks verifiers (docs/webhooks.md). */
const signingView = (row: AccountRow) => ({
  enabled: row.webhook_signing_enabled,
  secret: row.webhook_secret,
  standard_secret: row.webhook_secret ? standardSecret(row.webhook_secret) : null,
});

/**
 * The account object and the self-service calls the dashboard makes (docs/api-contract.md); the
 * key rotation and the webhook secret only with a key without limits (docs/keys.md).
 */
export function accountRoutes(ctx: AppContext) {
  const account = async (id: number) => {
    const row = await ctx.accounts.get(id);
    if (!row) throw notFound('account not found');
    return row;
  };

  const current = new Elysia({ name: 'account' })
    .use(authPlugin(ctx))
    .get('/v1/account', async ({ auth }) => envelope(toAccountView(await account(auth.accountId))))
    // Legacy alias kept by the API contract's versioning rules.
    .get('/account', async ({ auth }) => envelope(toAccountView(await account(auth.accountId))));

  const selfService = new Elysia({ name: 'account-self-service', prefix: '/v1/account' })
    .use(authPlugin(ctx))
    .use(noStore())
    .post('/api-key/regenerate', async ({ auth }) => {
      unlimitedKeyOnly(auth);
      const { key, revokedHashes } = await ctx.db.transaction().execute((trx) => issueApiKey(trx, auth.accountId));
      // The old key stops working on every instance before we answer.
      await ctx.keys.revoke(revokedHashes);
      return envelope({ api_key: key });
    })
    .get('/webhook-signing', async ({ auth }) => {
      unlimitedKeyOnly(auth);
      return envelope(signingView(await account(auth.accountId)));
    })
    .post('/webhook-signing', async ({ auth, body }) => {
      unlimitedKeyOnly(auth);
      const { enabled } = parseOr422(SigningBody, body);
      const row = await account(auth.accountId);
      const secret = enabled && !row.webhook_secret ? newSigningSecret() : undefined;
      const updated = await setWebhookSigning(ctx.db, auth.accountId, { enabled, secret });
      await ctx.accounts.changed(auth.accountId);
      return envelope(signingView(updated));
    })
    .post('/webhook-signing/reset', async ({ auth }) => {
      unlimitedKeyOnly(auth);
      const updated = await setWebhookSigning(ctx.db, auth.accountId, { secret: newSigningSecret() });
      await ctx.accounts.changed(auth.accountId);
      return envelope(signingView(updated));
    });

  return new Elysia().use(current).use(selfService);
}

import { Elysia } from 'elysia';
import type { AppContext } from '../app/context.ts';
import { authPlugin } from '../auth/auth-plugin.ts';
import { envelope } from '../http/envelope.ts';
import { noStore } from '../http/no-store.ts';
import { KeyService } from '../keys/key-service.ts';
import { unlimitedKeyOnly } from '../keys/unlimited-key-only.ts';
import { spendBreakdown } from '../keys/spend-breakdown.repository.ts';
import { parseOr422 } from '../http/parse.ts';
import { SpendQuery } from './dashboard.routes.ts';

/**
 * The account's API keys (docs/keys.md): listed with spend by any of its keys or the dashboard
 * session; created (the key is shown once), changed and revoked only with a key without limits.
 */
export function keyRoutes(ctx: AppContext) {
  const keys = new KeyService(ctx.db, ctx.keys);
  const breakdown = new Elysia({ name: 'spend-breakdown' })
    .use(authPlugin(ctx))
    // Spend per key and per model over the last `days` UTC days (the dashboard's overview).
    .get('/v1/account/spend/breakdown', async ({ auth, query }) => {
      const { days } = parseOr422(SpendQuery, query, 'query');
      const now = new Date();
      const since = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - (days - 1)));
      return envelope(await spendBreakdown(ctx.db, auth.accountId, since));
    });
  const manage = new Elysia({ name: 'keys', prefix: '/v1/keys' })
    .use(authPlugin(ctx))
    .use(noStore())
    .get('', async ({ auth }) => envelope(await keys.list(auth.accountId)))
    .post('', async ({ auth, body }) => {
      unlimitedKeyOnly(auth);
      return envelope(await keys.create(auth.accountId, body));
    })
    .get('/:id', async ({ auth, params }) => envelope(await keys.get(auth.accountId, keys.keyId(params.id))))
    .patch('/:id', async ({ auth, params, body }) => {
      unlimitedKeyOnly(auth);
      return envelope(await keys.update(auth.accountId, keys.keyId(params.id), body, auth.keyId));
    })
    .delete('/:id', async ({ auth, params }) => {
      unlimitedKeyOnly(auth);
      return envelope(await keys.revoke(auth.accountId, keys.keyId(params.id)));
    });
  return new Elysia().use(manage).use(breakdown);
}

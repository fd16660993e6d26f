import { Elysia } from 'elysia';
import * as v from 'valibot';
import type { AppContext } from '../app/context.ts';
import { createAccount, findAccountByEmail, findAccountById, toAccountView } from '../accounts/accounts.repository.ts';
import { topUp } from '../accounts/ledger.repository.ts';
import { toUnits } from '../accounts/money.ts';
import { bearerMatches, hashApiKey } from '../auth/api-keys.ts';
import { sqlState, UNIQUE_VIOLATION } from '../db/db-errors.ts';
import { envelope } from '../http/envelope.ts';
import { noStore } from '../http/no-store.ts';
import { conflict, notFound, unauthorized, unprocessable } from '../http/errors.ts';
import { idempotencyKey, REPLAYED_HEADER } from '../http/idempotency-key.ts';
import { parseOr422 } from '../http/parse.ts';
import { KeyService } from '../keys/key-service.ts';

const usd = v.pipe(v.number(), v.finite(), v.minValue(0), v.maxValue(1_000_000_000));
export const CreateAccountBody = v.object({
  // 254: the longest address SMTP carries; a longer one did not fit the unique index (500).
  email: v.pipe(
    v.string(),
    v.trim(),
    v.maxLength(254, 'must be at most 254 characters'),
    v.email('expected an e-mail address'),
  ),
  balance_usd: v.optional(usd),
});
export const TopupBody = v.object({ amount_usd: v.pipe(usd, v.minValue(0.0000000001, 'must be greater than 0')) });
export const AccountId = v.pipe(v.string(), v.regex(/^\d+$/, 'expected an integer user_id'));
/** Account ids are Postgres `integer`s: a larger one names no account (and must never reach a query). */
const MAX_ACCOUNT_ID = 2_147_483_647;

/** Operator API behind `ADMIN_TOKEN`; absent token → the routes do not exist (404). */
export function adminRoutes(ctx: AppContext) {
  const token = ctx.env.adminToken;
  if (!token) return new Elysia({ name: 'admin-off' });
  const tokenHash = hashApiKey(token);
  const keys = new KeyService(ctx.db, ctx.keys);

  const loadAccount = async (rawId: string) => {
    const digits = parseOr422(AccountId, rawId, 'user_id').replace(/^0+(?=\d)/, '');
    const id = digits.length <= 10 ? Number(digits) : Number.POSITIVE_INFINITY;
    if (id > MAX_ACCOUNT_ID) throw notFound(`account ${digits} not found`);
    // The account's calls answered here and settled after the answer (journal) are read too.
    await ctx.unsettled?.(id);
    const row = await findAccountById(ctx.db, id);
    if (!row) throw notFound(`account ${id} not found`);
    return row;
  };

  return (
    new Elysia({ name: 'admin', prefix: '/admin' })
      .onBeforeHandle(({ request }) => {
        if (!bearerMatches(request, tokenHash)) throw unauthorized('invalid or missing admin token');
      })
      .use(noStore())
      .post('/accounts', async ({ body }) => {
        const input = parseOr422(CreateAccountBody, body);
        const exists = () => conflict(`an account with email ${input.email} already exists`);
        if (await findAccountByEmail(ctx.db, input.email)) throw exists();
        // Two creates of one address at once: the unique index decides, and the loser is told so.
        const { account, apiKey } = await createAccount(ctx.db, {
          email: input.email,
          balance: toUnits(input.balance_usd ?? 0),
        }).catch((err: unknown) => {
          throw sqlState(err) === UNIQUE_VIOLATION ? exists() : err;
        });
        return envelope({ user_id: account.id, email: account.email, api_key: apiKey });
      })
      .post('/accounts/:id/topup', async ({ params, body, request, set }) => {
        const { amount_usd } = parseOr422(TopupBody, body);
        const key = idempotencyKey(request.headers);
        const row = await loadAccount(params.id);
        const done = await topUp(ctx.db, row.id, toUnits(amount_usd), key);
        if (done === 'conflict') throw unprocessable('Idempotency-Key: already used with a different amount_usd');
        if (done === 'replayed') Object.assign(set.headers, REPLAYED_HEADER);
        // Announced on a replay too: the first try may have committed and stopped before it.
        await ctx.accounts.changed(row.id);
        return envelope(toAccountView(await loadAccount(params.id)));
      })
      .get('/accounts/:id', async ({ params }) => envelope(toAccountView(await loadAccount(params.id))))
      // An account's keys, as the account itself manages them (docs/keys.md).
      .get('/accounts/:id/keys', async ({ params }) => envelope(await keys.list((await loadAccount(params.id)).id)))
      .post('/accounts/:id/keys', async ({ params, body }) =>
        envelope(await keys.create((await loadAccount(params.id)).id, body)),
      )
      .patch('/accounts/:id/keys/:key_id', async ({ params, body }) =>
        envelope(await keys.update((await loadAccount(params.id)).id, keys.keyId(params.key_id), body)),
      )
      .delete('/accounts/:id/keys/:key_id', async ({ params }) =>
        envelope(await keys.revoke((await loadAccount(params.id)).id, keys.keyId(params.key_id))),
      )
  );
}

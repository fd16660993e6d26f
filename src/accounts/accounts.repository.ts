import { sql } from 'kysely';
import type { DbOrTrx } from '../db/database.ts';
import type { AccountRow } from '../db/tables/accounts.table.ts';
import { generateApiKey, hashApiKey, keyPrefix } from '../auth/api-keys.ts';
import { applyLedgerMovement } from './ledger.repository.ts';
import { toUnits, unitsToUsd, type UsdUnits } from './money.ts';

export interface AccountView {
  user_id: number;
  email: string;
  balance_usd: number;
  created_at: number;
  updated_at: number;
}

const seconds = (d: Date) => Math.floor(d.getTime() / 1000);

export function toAccountView(row: AccountRow): AccountView {
  return {
    user_id: row.id,
    email: row.email,
    balance_usd: unitsToUsd(toUnits(row.balance_usd)),
    created_at: seconds(row.created_at),
    updated_at: seconds(row.updated_at),
  };
}

export async function findAccountById(db: DbOrTrx, id: number): Promise<AccountRow | undefined> {
  return db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findAccountByEmail(db: DbOrTrx, email: string): Promise<AccountRow | undefined> {
  return db.selectFrom('accounts').selectAll().where('email', '=', email).executeTakeFirst();
}

export async function countAccounts(db: DbOrTrx): Promise<number> {
  const row = await db.selectFrom('accounts').select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow();
  return row.n;
}

/** Issues a new key for the account and revokes every other one, in the caller's transaction. */
export async function issueApiKey(trx: DbOrTrx, accountId: number): Promise<{ key: string; revokedHashes: string[] }> {
  const revoked = await trx
    .updateTable('api_keys')
    .set({ revoked_at: sql`now()` })
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .returning('key_hash')
    .execute();
  const key = generateApiKey();
  await trx
    .insertInto('api_keys')
    .values({ account_id: accountId, key_hash: hashApiKey(key), key_prefix: keyPrefix(key) })
    .execute();
  return { key, revokedHashes: revoked.map((r) => r.key_hash) };
}

/** Creates the account, its opening top-up in the ledger, and its first key, atomically. */
export async function createAccount(
  db: DbOrTrx,
  input: { email: string; balance: UsdUnits },
): Promise<{ account: AccountRow; apiKey: string }> {
  return db.transaction().execute(async (trx) => {
    const created = await trx
      .insertInto('accounts')
      .values({ email: input.email })
      .returning('id')
      .executeTakeFirstOrThrow();
    if (input.balance > 0n) {
      await applyLedgerMovement(trx, {
        accountId: created.id,
        amount: input.balance,
        kind: 'topup',
        note: 'opening balance',
      });
    }
    const { key } = await issueApiKey(trx, created.id);
    const account = await trx.selectFrom('accounts').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    return { account, apiKey: key };
  });
}

export async function findActiveKey(
  db: DbOrTrx,
  keyHash: string,
): Promise<{ accountId: number; keyId: number; keyHash: string } | undefined> {
  const row = await db
    .selectFrom('api_keys')
    .select(['id', 'account_id', 'key_hash'])
    .where('key_hash', '=', keyHash)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return row && { accountId: row.account_id, keyId: row.id, keyHash: row.key_hash };
}

export async function setWebhookSigning(
  db: DbOrTrx,
  accountId: number,
  change: { enabled?: boolean; secret?: string },
): Promise<AccountRow> {
  return db
    .updateTable('accounts')
    .set({
      ...(change.enabled === undefined ? {} : { webhook_signing_enabled: change.enabled }),
      ...(change.secret === undefined ? {} : { webhook_secret: change.secret }),
      updated_at: sql`now()`,
    })
    .where('id', '=', accountId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

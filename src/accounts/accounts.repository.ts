import { sql } from 'kysely';
import type { DbOrTrx } from '../db/database.ts';
import type { AccountRow } from '../db/tables/accounts.table.ts';
import { rotateDefaultKey } from '../keys/api-keys.repository.ts';
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

/**
 * A new secret for the account's `default` key (a new account gets its first one), in the
 * caller's transaction; the hashes to drop from every instance's cache come back with it.
 */
export async function issueApiKey(trx: DbOrTrx, accountId: number): Promise<{ key: string; revokedHashes: string[] }> {
  return rotateDefaultKey(trx, accountId);
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

import { sql } from 'kysely';
import { generateApiKey, hashApiKey, keyPrefix } from '../auth/api-keys.ts';
import type { DbOrTrx } from '../db/database.ts';
import type { BudgetPeriod } from '../db/tables/api-keys.table.ts';
import { fromUnits, toUnits, type UsdUnits } from '../accounts/money.ts';
import type { KeyPolicy } from './key-policy.ts';
import { addSpend, currentPeriodStart, spendNow } from './key-period.repository.ts';

/** A key's settings as stored (amounts exact). */
export interface KeySettings {
  name: string;
  budget: UsdUnits | null;
  budgetPeriod: BudgetPeriod | null;
  models: string[] | null;
  rpm: number | null;
  tpm: number | null;
  /** Unix seconds. */
  expiresAt: number | null;
}

export interface KeyRecord extends KeySettings {
  id: number;
  accountId: number;
  keyHash: string;
  keyPrefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  /** Spent in the current period (lifetime when no period). */
  spend: UsdUnits;
  periodStart: Date | null;
}

export const DEFAULT_KEY_NAME = 'default';

const columns = (k: string) =>
  [
    sql.ref(`${k}.id`).as('id'),
    sql.ref(`${k}.account_id`).as('account_id'),
    sql.ref(`${k}.key_hash`).as('key_hash'),
    sql.ref(`${k}.key_prefix`).as('key_prefix'),
    sql.ref(`${k}.name`).as('name'),
    sql<string | null>`${sql.ref(`${k}.budget_usd`)}::text`.as('budget_usd'),
    sql.ref(`${k}.budget_period`).as('budget_period'),
    sql.ref(`${k}.models`).as('models'),
    sql.ref(`${k}.rpm`).as('rpm'),
    sql.ref(`${k}.tpm`).as('tpm'),
    sql.ref(`${k}.expires_at`).as('expires_at'),
    sql.ref(`${k}.last_used_at`).as('last_used_at'),
    sql.ref(`${k}.created_at`).as('created_at'),
    sql<string>`${spendNow(k)}::text`.as('spend_now'),
    sql<Date | null>`${currentPeriodStart(sql.ref(`${k}.budget_period`))}`.as('period_now'),
  ] as const;

interface RawKey {
  id: number;
  account_id: number;
  key_hash: string;
  key_prefix: string;
  name: string;
  budget_usd: string | null;
  budget_period: BudgetPeriod | null;
  models: unknown;
  rpm: number | null;
  tpm: number | null;
  expires_at: Date | null;
  last_used_at: Date | null;
  created_at: Date;
  spend_now: string;
  period_now: Date | null;
}

function toRecord(row: RawKey): KeyRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    keyHash: row.key_hash,
    keyPrefix: row.key_prefix,
    name: row.name,
    budget: row.budget_usd === null ? null : toUnits(row.budget_usd),
    budgetPeriod: row.budget_period,
    models: Array.isArray(row.models) ? (row.models as string[]) : null,
    rpm: row.rpm,
    tpm: row.tpm,
    expiresAt: row.expires_at ? Math.floor(new Date(row.expires_at).getTime() / 1000) : null,
    createdAt: new Date(row.created_at),
    lastUsedAt: row.last_used_at ? new Date(row.last_used_at) : null,
    spend: toUnits(row.spend_now),
    periodStart: row.period_now ? new Date(row.period_now) : null,
  };
}

export function policyOf(record: KeySettings): KeyPolicy {
  return {
    models: record.models,
    rpm: record.rpm,
    tpm: record.tpm,
    expiresAt: record.expiresAt === null ? null : record.expiresAt * 1000,
    budgeted: record.budget !== null,
  };
}

/** The active (not revoked) key of this hash, with its policy. */
export async function findActiveKey(
  db: DbOrTrx,
  keyHash: string,
): Promise<{ accountId: number; keyId: number; keyHash: string; policy: KeyPolicy } | undefined> {
  const row = (await db
    .selectFrom('api_keys as k')
    .select(columns('k'))
    .where('k.key_hash', '=', keyHash)
    .where('k.revoked_at', 'is', null)
    .executeTakeFirst()) as RawKey | undefined;
  if (!row) return undefined;
  const record = toRecord(row);
  return { accountId: record.accountId, keyId: record.id, keyHash: record.keyHash, policy: policyOf(record) };
}

/** The account's active keys, oldest first. */
export async function listKeys(db: DbOrTrx, accountId: number): Promise<KeyRecord[]> {
  const rows = (await db
    .selectFrom('api_keys as k')
    .select(columns('k'))
    .where('k.account_id', '=', accountId)
    .where('k.revoked_at', 'is', null)
    .orderBy('k.id')
    .execute()) as RawKey[];
  return rows.map(toRecord);
}

/**
 * Locks the account's row, so its key list changes one create at a time (creates at once then
 * count each other), and counts its active keys. The same row lock money writers take.
 */
export async function lockAndCountActiveKeys(trx: DbOrTrx, accountId: number): Promise<number> {
  await trx.selectFrom('accounts').select('id').where('id', '=', accountId).forNoKeyUpdate().execute();
  return countActiveKeys(trx, accountId);
}

/** How many active keys the account has. */
export async function countActiveKeys(db: DbOrTrx, accountId: number): Promise<number> {
  const row = await db
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** One active key of the account; undefined for another account's key, a revoked one or none. */
export async function findKey(db: DbOrTrx, accountId: number, id: number): Promise<KeyRecord | undefined> {
  const row = (await db
    .selectFrom('api_keys as k')
    .select(columns('k'))
    .where('k.account_id', '=', accountId)
    .where('k.id', '=', id)
    .where('k.revoked_at', 'is', null)
    .executeTakeFirst()) as RawKey | undefined;
  return row && toRecord(row);
}

const settingValues = (s: Partial<KeySettings>) => ({
  ...(s.name === undefined ? {} : { name: s.name }),
  ...(s.budget === undefined ? {} : { budget_usd: s.budget === null ? null : fromUnits(s.budget) }),
  ...(s.budgetPeriod === undefined ? {} : { budget_period: s.budgetPeriod }),
  ...(s.models === undefined ? {} : { models: s.models === null ? null : JSON.stringify(s.models) }),
  ...(s.rpm === undefined ? {} : { rpm: s.rpm }),
  ...(s.tpm === undefined ? {} : { tpm: s.tpm }),
  ...(s.expiresAt === undefined
    ? {}
    : { expires_at: s.expiresAt === null ? null : new Date(s.expiresAt * 1000).toISOString() }),
});

/** Creates a key; answers it in full (its only showing) with the stored record. */
export async function insertKey(
  db: DbOrTrx,
  accountId: number,
  settings: KeySettings,
): Promise<{ key: string; record: KeyRecord }> {
  const key = generateApiKey();
  const created = await db
    .insertInto('api_keys')
    .values({
      account_id: accountId,
      key_hash: hashApiKey(key),
      key_prefix: keyPrefix(key),
      ...settingValues(settings),
      period_start: currentPeriodStart(sql.lit(settings.budgetPeriod)),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const record = await findKey(db, accountId, created.id);
  if (!record) throw new Error(`key ${created.id} vanished after insert`);
  return { key, record };
}

/** Changes the given settings of an active key; undefined when the account has no such key. */
export async function updateKey(
  db: DbOrTrx,
  accountId: number,
  id: number,
  change: Partial<KeySettings>,
): Promise<KeyRecord | undefined> {
  const values = settingValues(change);
  // A new period starts the count afresh: what was charged before it is not in the new count.
  const periodChanged =
    change.budgetPeriod === undefined
      ? {}
      : {
          period_changed_at: sql<Date | null>`case when budget_period is distinct from ${change.budgetPeriod}::text then now() else period_changed_at end`,
        };
  const updated = await db
    .updateTable('api_keys')
    .set({ ...values, ...periodChanged, updated_at: sql`now()` })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
  return updated && findKey(db, accountId, id);
}

/** Revokes an active key; answers its hash (to drop it from every cache), or undefined. */
export async function revokeKey(db: DbOrTrx, accountId: number, id: number): Promise<string | undefined> {
  const row = await db
    .updateTable('api_keys')
    .set({ revoked_at: sql`now()`, updated_at: sql`now()` })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .returning('key_hash')
    .executeTakeFirst();
  return row?.key_hash;
}

/**
 * A new secret for the account's `default` key (its oldest active key of that name), in the
 * caller's transaction: the key keeps its id, settings and spend; the old secret stops working.
 * An account without one gets a new `default` key.
 */
export async function rotateDefaultKey(
  trx: DbOrTrx,
  accountId: number,
): Promise<{ key: string; revokedHashes: string[] }> {
  const key = generateApiKey();
  const current = await trx
    .selectFrom('api_keys')
    .select(['id', 'key_hash'])
    .where('account_id', '=', accountId)
    .where('name', '=', DEFAULT_KEY_NAME)
    .where('revoked_at', 'is', null)
    .orderBy('id')
    .limit(1)
    .forUpdate()
    .executeTakeFirst();
  if (!current) {
    await trx
      .insertInto('api_keys')
      .values({ account_id: accountId, key_hash: hashApiKey(key), key_prefix: keyPrefix(key), name: DEFAULT_KEY_NAME })
      .execute();
    return { key, revokedHashes: [] };
  }
  await trx
    .updateTable('api_keys')
    .set({ key_hash: hashApiKey(key), key_prefix: keyPrefix(key), updated_at: sql`now()` })
    .where('id', '=', current.id)
    .execute();
  return { key, revokedHashes: [current.key_hash] };
}

/** Records when keys were last used (batched by the caller; a few seconds late is fine). */
export async function touchKeys(db: DbOrTrx, uses: Map<number, Date>): Promise<void> {
  if (uses.size === 0) return;
  const ids = [...uses.keys()];
  await sql`update api_keys as k set last_used_at = greatest(coalesce(k.last_used_at, v.t), v.t)
    from unnest(${ids}::int[], ${ids.map((id) => uses.get(id)?.toISOString())}::timestamptz[]) as v(id, t)
    where k.id = v.id`.execute(db);
}

/**
 * A task's refund leaves its key's spend too, when the task was charged in the key's current
 * period (a refund never reaches into a period already closed, nor behind a change of the
 * period, which started the count afresh: docs/keys.md). In the caller's transaction,
 * after the account row is locked (accounts, then keys: the lock order of every money writer).
 */
export async function refundKeySpend(trx: DbOrTrx, taskId: string, amount: UsdUnits): Promise<void> {
  if (amount <= 0n) return;
  await sql`update api_keys as k set spend_usd = greatest(k.spend_usd - ${fromUnits(amount)}::numeric, 0)
    from tasks as t where t.id = ${taskId} and k.id = t.key_id
      and (k.period_changed_at is null or t.created_at >= k.period_changed_at)
      and (k.budget_period is null or (k.period_start = ${currentPeriodStart(sql.ref('k.budget_period'))} and t.created_at >= k.period_start))`.execute(
    trx,
  );
}

/**
 * Adds `amount` to the key's spend in its current period (rolled over first). In the caller's
 * transaction, after it locked the account and then the key (`lockKeyBudgets`) and checked the room.
 */
export async function addKeySpend(trx: DbOrTrx, keyId: number, amount: UsdUnits): Promise<void> {
  if (amount <= 0n) return;
  const spend = addSpend('k', sql`${fromUnits(amount)}::numeric`);
  await sql`update api_keys as k set spend_usd = ${spend.spend_usd}, period_start = ${spend.period_start}
    where k.id = ${keyId}`.execute(trx);
}

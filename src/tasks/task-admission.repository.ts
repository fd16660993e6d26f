import { sql } from 'kysely';
import { fromUnits, type UsdUnits } from '../accounts/money.ts';
import type { DbOrTrx } from '../db/database.ts';
import { keySpendCte } from '../keys/key-admission.repository.ts';

/** A task ready to be created: validated and priced. */
export interface NewTask {
  taskId: string;
  accountId: number;
  /** The API key that creates it: its budget is checked and its spend grows (docs/keys.md). */
  keyId?: number | null;
  model: string;
  provider: string;
  category: string;
  /** The input as submitted, stored for the task record. */
  input: Record<string, unknown>;
  callbackUrl: string | null;
  /** The create call's `x-request-id`. */
  requestId?: string | null;
  charge: UsdUnits;
  idempotency?: { key: string; hash: string };
}

/** A task the batch admitted, with what the batch has charged its account up to and including it. */
export interface AdmittedTask {
  item: NewTask;
  charged: UsdUnits;
}

/**
 * Writes an admitted batch: debits each account by its total, inserts the task rows and appends a
 * charge to the ledger per paid task, in one statement so the account locks the caller holds last
 * one round trip. Runs inside the caller's transaction, after it locked the accounts.
 */
export async function writeAdmittedBatch(
  trx: DbOrTrx,
  admitted: AdmittedTask[],
  charges: Map<number, UsdUnits>,
  keyCharges: Map<number, UsdUnits> = new Map(),
): Promise<void> {
  const touched = [...new Set(admitted.map((a) => a.item.accountId))];
  const rows = admitted.map((a) => a.item);
  const charged = admitted.filter(({ item }) => item.charge > 0n);
  // Each ledger row's balance after it: the new balance plus what the batch charged the account after that row.
  await sql`
    with balances as (
      update accounts as a set balance_usd = a.balance_usd - v.total, updated_at = now()
      from unnest(${touched}::int[], ${touched.map((id) => fromUnits(charges.get(id) ?? 0n))}::numeric[]) as v(id, total)
      where a.id = v.id
      returning a.id, a.balance_usd
    ), ${keySpendCte(keyCharges)}, created as (
      insert into tasks (id, account_id, key_id, model, provider, category, status, input, cost_usd, callback_url, idempotency_key, request_hash, request_id)
      select id, account_id, key_id, model, provider, category, 'processing', input, cost_usd, callback_url, idempotency_key, request_hash, request_id
      from unnest(${rows.map((i) => i.taskId)}::text[], ${rows.map((i) => i.accountId)}::int[], ${rows.map((i) => i.keyId ?? null)}::int[], ${rows.map((i) => i.model)}::text[],
                  ${rows.map((i) => i.provider)}::text[], ${rows.map((i) => i.category)}::text[], ${rows.map((i) => JSON.stringify(i.input))}::jsonb[],
                  ${rows.map((i) => fromUnits(i.charge))}::numeric[], ${rows.map((i) => i.callbackUrl)}::text[],
                  ${rows.map((i) => i.idempotency?.key ?? null)}::text[], ${rows.map((i) => i.idempotency?.hash ?? null)}::text[],
                  ${rows.map((i) => i.requestId ?? null)}::text[])
        as t(id, account_id, key_id, model, provider, category, input, cost_usd, callback_url, idempotency_key, request_hash, request_id)
      returning id
    )
    insert into ledger_entries (account_id, amount_usd, balance_after_usd, kind, task_id, category, note)
    select l.account_id, l.amount_usd, b.balance_usd + v.total - l.cumulative, 'charge', l.task_id, l.category, l.note
    from unnest(${charged.map(({ item }) => item.accountId)}::int[], ${charged.map(({ item }) => fromUnits(-item.charge))}::numeric[],
                ${charged.map(({ charged: c }) => fromUnits(c))}::numeric[], ${charged.map(({ item }) => item.taskId)}::text[],
                ${charged.map(({ item }) => item.category)}::text[], ${charged.map(({ item }) => item.model)}::text[])
      as l(account_id, amount_usd, cumulative, task_id, category, note)
    join balances as b on b.id = l.account_id
    join unnest(${touched}::int[], ${touched.map((id) => fromUnits(charges.get(id) ?? 0n))}::numeric[]) as v(id, total) on v.id = l.account_id`.execute(
    trx,
  );
}

import { sql } from 'kysely';
import type { Db, DbOrTrx } from '../db/database.ts';
import type { LedgerKind } from '../db/tables/ledger-entries.table.ts';
import { lockSpendable } from './llm-reservations.repository.ts';
import { fromUnits, toUnits, type UsdUnits } from './money.ts';

export interface LedgerMovement {
  accountId: number;
  /** Signed: negative for charges. */
  amount: UsdUnits;
  kind: LedgerKind;
  taskId?: string | null;
  category?: string | null;
  note?: string | null;
  /** A top-up's Idempotency-Key (`topUp`). */
  idempotencyKey?: string;
}

/**
 * Moves money: one conditional UPDATE of the balance (never below what open reservations hold, so concurrent charges
 * cannot overdraw) and one append to the ledger, inside the caller's transaction.
 * Returns the new balance, or null when the balance was too low (nothing changed).
 */
export async function applyLedgerMovement(trx: DbOrTrx, move: LedgerMovement): Promise<UsdUnits | null> {
  const amount = fromUnits(move.amount);
  const updated = await trx
    .updateTable('accounts')
    .set({
      balance_usd: sql`balance_usd + ${amount}::numeric`,
      topped_up_usd: move.kind === 'topup' ? sql`topped_up_usd + ${amount}::numeric` : sql`topped_up_usd`,
      updated_at: sql`now()`,
    })
    .where('id', '=', move.accountId)
    // Only a debit can be refused, and never into money held by open LLM reservations; a credit
    // (top-up, refund) always lands, even on a balance the post-paid era left below zero.
    .$if(move.amount < 0n, (q) => q.where(sql<boolean>`balance_usd - reserved_usd + ${amount}::numeric >= 0`))
    .returning('balance_usd')
    .executeTakeFirst();
  if (!updated) return null;
  await trx
    .insertInto('ledger_entries')
    .values({
      account_id: move.accountId,
      amount_usd: amount,
      balance_after_usd: String(updated.balance_usd),
      kind: move.kind,
      task_id: move.taskId ?? null,
      category: move.category ?? null,
      note: move.note ?? null,
      ...(move.idempotencyKey === undefined ? {} : { idempotency_key: move.idempotencyKey }),
    })
    .execute();
  return toUnits(updated.balance_usd);
}

/** What a top-up did: credited the account, found it already done under its key, or found the key used for another amount. */
export type TopUpResult = 'credited' | 'replayed' | 'conflict';

/**
 * Credits an account (an operator's top-up, docs/money.md). With an `Idempotency-Key` the credit
 * happens once for the account however often the request is retried: a retry of the same amount
 * is `replayed`, another amount under the same key a `conflict`, and neither moves money.
 */
export function topUp(db: Db, accountId: number, amount: UsdUnits, idempotencyKey?: string): Promise<TopUpResult> {
  return db.transaction().execute(async (trx) => {
    if (idempotencyKey !== undefined) {
      // The account row's lock puts two tries of one top-up in order: the second sees the first's
      // entry (the unique index would refuse its insert anyway).
      await lockSpendable(trx, [accountId]);
      const earlier = await trx
        .selectFrom('ledger_entries')
        .select(['amount_usd', 'kind'])
        .where('account_id', '=', accountId)
        .where('idempotency_key', '=', idempotencyKey)
        .executeTakeFirst();
      if (earlier) return earlier.kind === 'topup' && toUnits(earlier.amount_usd) === amount ? 'replayed' : 'conflict';
    }
    await applyLedgerMovement(trx, { accountId, amount, kind: 'topup', note: 'admin top-up', idempotencyKey });
    return 'credited';
  });
}

export async function ledgerSum(db: DbOrTrx, accountId: number): Promise<number> {
  const row = await db
    .selectFrom('ledger_entries')
    .select(sql<string>`coalesce(sum(amount_usd), 0)`.as('total'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return Number(row.total);
}

/** Charges minus refunds per UTC day (`YYYY-MM-DD`) and category since `since`: what the account spent. */
export async function spendRows(
  db: DbOrTrx,
  accountId: number,
  since: Date,
): Promise<Array<{ day: string; category: string | null; spent: string }>> {
  return db
    .selectFrom('ledger_entries')
    .select([
      sql<string>`to_char(created_at at time zone 'UTC', 'YYYY-MM-DD')`.as('day'),
      'category',
      sql<string>`-sum(amount_usd)`.as('spent'),
    ])
    .where('account_id', '=', accountId)
    .where('kind', 'in', ['charge', 'refund'])
    .where('created_at', '>=', since)
    .groupBy([sql`1`, 'category'])
    .execute();
}

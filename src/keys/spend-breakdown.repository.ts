import { sql } from 'kysely';
import { toUnits, unitsToUsd } from '../accounts/money.ts';
import type { DbOrTrx } from '../db/database.ts';

export interface SpendBreakdown {
  by_key: Array<{ key_id: number | null; name: string | null; spend_usd: number; calls: number }>;
  by_model: Array<{ model: string; spend_usd: number; calls: number }>;
}

/**
 * What the account's tasks and LLM calls cost since `since`, per API key and per model, from the
 * records' final cost (refunds already taken off), most expensive first.
 */
export async function spendBreakdown(db: DbOrTrx, accountId: number, since: Date): Promise<SpendBreakdown> {
  const [byKey, byModel] = await Promise.all([
    sql<{ key_id: number | null; name: string | null; spend: string; calls: number }>`
      select t.key_id, k.name, sum(t.cost_usd)::text as spend, count(*)::int as calls
      from tasks as t left join api_keys as k on k.id = t.key_id
      where t.account_id = ${accountId} and t.created_at >= ${since.toISOString()}::timestamptz
      group by t.key_id, k.name order by sum(t.cost_usd) desc, t.key_id`.execute(db),
    sql<{ model: string; spend: string; calls: number }>`
      select model, sum(cost_usd)::text as spend, count(*)::int as calls
      from tasks where account_id = ${accountId} and created_at >= ${since.toISOString()}::timestamptz
      group by model order by sum(cost_usd) desc, model`.execute(db),
  ]);
  return {
    by_key: byKey.rows.map((r) => ({
      key_id: r.key_id,
      name: r.name,
      spend_usd: unitsToUsd(toUnits(r.spend)),
      calls: r.calls,
    })),
    by_model: byModel.rows.map((r) => ({ model: r.model, spend_usd: unitsToUsd(toUnits(r.spend)), calls: r.calls })),
  };
}

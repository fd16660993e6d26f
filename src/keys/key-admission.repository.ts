import { type RawBuilder, sql } from 'kysely';
import { fromUnits, type UsdUnits } from '../accounts/money.ts';
import { addSpend } from './key-period.repository.ts';

/**
 * A CTE for the task admission statement (src/tasks/task-admission.repository.ts): each creating
 * key's spend grows by what the batch charged under it, its period rolled over first. The caller
 * locked the keys (after the accounts) and checked their budgets.
 */
export function keySpendCte(keyCharges: Map<number, UsdUnits>): RawBuilder<unknown> {
  const ids = [...keyCharges.keys()];
  const spend = addSpend('k', sql`m.charged`);
  return sql`key_spent as (
      update api_keys as k set spend_usd = ${spend.spend_usd}, period_start = ${spend.period_start}
      from unnest(${ids}::int[], ${ids.map((id) => fromUnits(keyCharges.get(id) ?? 0n))}::numeric[]) as m(id, charged)
      where k.id = m.id
      returning k.id
    )`;
}

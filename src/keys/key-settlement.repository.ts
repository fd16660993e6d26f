import { type RawBuilder, sql } from 'kysely';
import { addSpend } from './key-period.repository.ts';

/**
 * The key part of the LLM settlement statement (src/llm/llm-settlement.repository.ts), as CTEs
 * appended to it: the calls' key holds are deleted and leave `reserved_usd`, and each key's spend
 * grows by its calls' charges — in the statement that charges the accounts, after it locked
 * them (accounts, then keys: the lock order of every money writer). It reads the statement's
 * `rec` (every call of the batch, with `key_id` and `key_hold_id`) and `charged` (the new calls,
 * with their `charge`).
 */
export function addKeySpendSql(): RawBuilder<unknown> {
  const spend = addSpend('k', sql`m.charged`);
  return sql`key_released as (
      delete from key_holds where id in (select key_hold_id from rec where key_hold_id is not null)
      returning key_id, amount_usd
    ), key_moves as (
      select key_id, sum(charged) as charged, sum(released) as released from (
        select key_id, charge as charged, 0 as released from charged where key_id is not null
        union all select key_id, 0, amount_usd from key_released
      ) as x group by key_id
    ), key_spent as (
      update api_keys as k set spend_usd = ${spend.spend_usd}, period_start = ${spend.period_start},
        reserved_usd = greatest(k.reserved_usd - m.released, 0)
      from key_moves as m where k.id = m.key_id
      returning k.id
    )`;
}

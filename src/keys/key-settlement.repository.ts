import { type RawBuilder, sql } from 'kysely';
import { addSpend } from './key-period.repository.ts';

/**
 * The key part of the LLM settlement statement (src/llm/llm-settlement.repository.ts), as CTEs
 * appended to it: each call's charge comes out of the key lease its budget hold was granted from
 * (up to the hold, and leaves `reserved_usd` with it), and each key's spend grows by its calls'
 * charges — in the statement that charges the accounts, after it locked them (accounts, then
 * keys: the lock order of every money writer). It reads the statement's `charged` (the new calls,
 * with `key_id`, `key_hold_id` — the lease —, `key_hold_units` and their `charge`); `key_taken`
 * answers what each lease gave, so the instance's copy of the lease follows.
 */
export function addKeySpendSql(): RawBuilder<unknown> {
  const spend = addSpend('k', sql`m.charged`);
  return sql`key_locked as (
      -- The keys before their leases, in id order: the order a lease growth locks them in
      -- (src/keys/key-holds.repository.ts), so the two never wait on each other in a circle.
      select k.id from api_keys as k
      where k.id = any(array(select key_id from charged where key_id is not null))
      order by k.id for no key update
    ), key_take as (
      -- Locked, so read as they are now (a lease swept while this statement waited gives nothing).
      select h.id, h.key_id, least(h.amount_usd, s.want) as take
      from key_holds as h
      join (select key_hold_id, sum(least(charge, key_hold_units)) as want from charged
            where key_hold_id is not null group by key_hold_id) as s on s.key_hold_id = h.id
      where (select count(*) from key_locked) >= 0
      for no key update of h
    ), key_taken as (
      update key_holds as h set amount_usd = h.amount_usd - t.take from key_take as t where h.id = t.id and t.take > 0
      returning h.id, h.key_id, t.take
    ), key_moves as (
      -- What the leases gave, as the update found them: a lease the sweeper deleted while this
      -- statement waited for a lock (its amount already off reserved_usd) gives nothing.
      select key_id, sum(charged) as charged, sum(released) as released from (
        select key_id, charge as charged, 0 as released from charged where key_id is not null
        union all select key_id, 0, take from key_taken
      ) as x group by key_id
    ), key_spent as (
      update api_keys as k set spend_usd = ${spend.spend_usd}, period_start = ${spend.period_start},
        reserved_usd = greatest(k.reserved_usd - m.released, 0)
      from key_moves as m where k.id = m.key_id
      returning k.id
    )`;
}

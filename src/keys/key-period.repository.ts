import { type RawBuilder, sql } from 'kysely';

/**
 * The start of a key's current budget period as SQL (UTC calendar: day, ISO week from Monday,
 * month), from the database clock so every instance agrees; null for a lifetime budget.
 * `period` is an SQL expression naming the period column.
 */
export function currentPeriodStart(period: RawBuilder<unknown>): RawBuilder<Date | null> {
  return sql<Date | null>`(case ${period}
    when 'day' then date_trunc('day', now() at time zone 'UTC') at time zone 'UTC'
    when 'week' then date_trunc('week', now() at time zone 'UTC') at time zone 'UTC'
    when 'month' then date_trunc('month', now() at time zone 'UTC') at time zone 'UTC' end)`;
}

/**
 * What the key has spent in its current period: `spend_usd` counts from `period_start`, so a
 * key whose stored period has passed has spent nothing yet in the new one. `k` is the table alias.
 */
export function spendNow(k: string): RawBuilder<string> {
  const ref = (column: string) => sql.ref(`${k}.${column}`);
  return sql<string>`(case when ${ref('budget_period')} is null or ${ref('period_start')} = ${currentPeriodStart(ref('budget_period'))}
    then ${ref('spend_usd')} else 0 end)`;
}

/** SET clause values that add `amount` (SQL numeric) to the key's spend, rolling the period over first. */
export function addSpend(k: string, amount: RawBuilder<unknown>) {
  return {
    spend_usd: sql<string>`greatest(${spendNow(k)} + ${amount}, 0)`,
    period_start: currentPeriodStart(sql.ref(`${k}.budget_period`)),
  };
}

import { sql } from 'kysely';
import { toUnits, type UsdUnits } from '../accounts/money.ts';
import type { Db } from '../db/database.ts';
import type { RunPrepared } from '../db/prepared.ts';
import { addKeySpendSql } from '../keys/key-settlement.repository.ts';

/** One finished LLM or embeddings call as the settlement statement reads it (numeric amounts as exact text). */
export interface SettlementRow {
  ord: number;
  id: string;
  account_id: number;
  model: string;
  provider: string;
  /** The task and ledger category: `llm`, or `embedding` for embeddings calls. */
  category: string;
  status: string;
  input: unknown;
  output: unknown;
  error_message: string | null;
  cost: string;
  created_at: string;
  hold_id: string | null;
  hold_units: string | null;
  request_id: string | null;
  key_id: number | null;
  /** The key lease the call's budget hold came from, and the hold's size. */
  key_hold_id: string | null;
  key_hold_units: string | null;
}

/** The accounts whose money moved, any account charged less than cost, and what each lease gave. */
export interface SettledBatch {
  accounts: number[];
  shortfalls: Map<number, UsdUnits>;
  taken: Map<string, UsdUnits>;
  /** What each key lease gave (src/keys/key-budgets.ts). */
  keyTaken: Map<string, UsdUnits>;
}

/**
 * The settlement statement with its two parameters, `rowsJson` ($1) and `finishedAt` ($2). Its
 * text never changes, so it is built and compiled once per database (`settlementText`): building
 * it with Kysely froze a few hundred operation nodes per batch, the largest part of a lone
 * call's settlement CPU besides the round trip.
 */
function settlementQuery(rowsJson: string, finishedAt: string) {
  return sql`
    with rec as (
      select * from jsonb_to_recordset(${rowsJson}::text::jsonb)
        as t(ord int, id text, account_id int, model text, provider text, category text, status text, input jsonb, output jsonb,
             error_message text, cost numeric, created_at timestamptz, hold_id text, hold_units numeric, request_id text,
             key_id int, key_hold_id text, key_hold_units numeric)
    ), locked as (
      select a.id, a.balance_usd - a.reserved_usd as spendable from accounts as a
      where a.id = any(array(select account_id from rec)) order by a.id for no key update
    ), lease_take as (
      -- Locked, so read as they are now: the statement's snapshot can predate a write that
      -- committed while "locked" waited (Read Committed refreshes only the rows it locks), and a
      -- lease the sweeper deleted meanwhile (its amount already off reserved_usd) would be taken
      -- from again, and counted in the cap twice. Every account of the batch is locked first
      -- (the count reads all of "locked"), so the lock order stays accounts, then leases.
      select h.id, h.account_id, least(h.amount_usd, s.want) as take
      from llm_reservations as h
      join (select hold_id, sum(least(cost, hold_units)) as want from rec where hold_id is not null group by hold_id) as s on s.hold_id = h.id
      where (select count(*) from locked) > 0
      for no key update of h
    ), budget as (
      select l.id, coalesce((select sum(t.take) from lease_take as t where t.account_id = l.id), 0) as from_lease,
             greatest(l.spendable, 0) as spendable
      from locked as l
    ), running as (
      select f.*, b.from_lease, b.from_lease + b.spendable as cap, sum(f.cost) over (partition by f.account_id order by f.ord) as upto
      from rec as f join budget as b on b.id = f.account_id
    ), priced as (
      -- Together, the account's calls up to this one are charged their cost capped: the running
      -- charge the ledger's balances need (the cap is never negative, so no second window sums
      -- the charges). Each call is charged its step of it.
      select r.*, greatest(least(r.upto, r.cap), 0) as charged_upto,
             greatest(least(r.upto, r.cap), 0) - greatest(least(r.upto - r.cost, r.cap), 0) as charge
      from running as r
    ), created as (
      -- A call whose task row exists was settled by a commit we did not hear of: not charged again.
      insert into tasks (id, account_id, key_id, model, provider, category, status, input, output, error_message, cost_usd, created_at, finished_at, request_id)
      select id, account_id, key_id, model, provider, category, status, input, output, error_message, charge, created_at, ${finishedAt}::timestamptz, request_id
      from priced on conflict (id) do nothing
      returning id
    ), verdict as (
      -- A batch is retried whole, so its calls are all new (billed) or all recorded (nothing
      -- moves). Both at once would price the new calls beside the recorded ones: the statement
      -- fails instead, with a data error (22P02) that has the batch written call by call. The
      -- failing cast reads a subquery so that planning cannot fold it into a constant error.
      select case (select count(*) from created)
        when (select count(*) from rec) then true
        when 0 then false
        else ('settlement batch partly recorded already: ' || (select count(*) from created))::int::boolean
      end as billed
    ), charged as (
      select p.* from priced as p where (select billed from verdict)
    ), totals as (
      -- Every account of a billed batch has calls in it; a batch not billed has no totals.
      select account_id as id, from_lease, sum(charge) as charged, sum(cost) as cost
      from charged group by account_id, from_lease
    ), taken as (
      update llm_reservations as h set amount_usd = h.amount_usd - t.take from lease_take as t
      where h.id = t.id and t.take > 0 and (select billed from verdict)
      returning h.id, t.take
    ), moved as (
      update accounts as a set balance_usd = a.balance_usd - t.charged, reserved_usd = a.reserved_usd - t.from_lease, updated_at = now()
      from totals as t where a.id = t.id and (t.charged > 0 or t.from_lease > 0)
      returning a.id, a.balance_usd, t.charged
    ), ledger as (
      insert into ledger_entries (account_id, amount_usd, balance_after_usd, kind, task_id, category, note)
      select c.account_id, -c.charge, m.balance_usd + m.charged - c.charged_upto, 'charge', c.id, c.category, c.model
      from charged as c join moved as m on m.id = c.account_id where c.charge > 0
    ), ${addKeySpendSql()}
    -- Every account of the batch, moved or not: one charged nothing can still fall short.
    select 'account' as kind, id::text as id, cost::text as cost, charged::text as charged from totals
    union all
    select 'lease', id, take::text, null from taken
    union all
    select 'key_lease', id, take::text, null from key_taken`;
}

const settlementTexts = new WeakMap<Db, string>();

function settlementText(db: Db): string {
  let text = settlementTexts.get(db);
  if (text === undefined) {
    const rows = '[]';
    const finishedAt = new Date(0).toISOString();
    const compiled = settlementQuery(rows, finishedAt).compile(db);
    // The per-batch values are passed by position: a parameter added to the statement must be added here.
    const [first, second, ...more] = compiled.parameters;
    if (first !== rows || second !== finishedAt || more.length)
      throw new Error('the settlement statement takes exactly ($1 rows, $2 finished_at)');
    text = compiled.sql;
    settlementTexts.set(db, text);
  }
  return text;
}

/**
 * The batch's settlement as one statement (one round trip, one commit): the accounts are locked
 * in id order, the calls' holds deleted, and each call charged its cost — capped, per account,
 * at what the account can spend plus the holds this batch releases, so the balance never goes
 * below zero and other calls' holds are never eaten into. A batch whose task rows exist already
 * (retried after a commit we did not hear about) moves no money, so no call is charged twice; a
 * batch of recorded and new calls at once fails with a data error (split by the group commit).
 * Returns the accounts whose money moved and the shortfall of any account charged less than cost.
 */
export async function settleLlmCalls(
  db: Db,
  prepared: RunPrepared,
  rows: SettlementRow[],
  /** When the calls finished: now, unless they are settled later from the journal. */
  finishedAt = new Date().toISOString(),
): Promise<SettledBatch> {
  // The rows travel as one JSON document: one JSON.stringify for the batch, no per-element
  // escaping of a jsonb[] array literal by the driver (the inputs are the bulk of the bytes).
  const parameters = [JSON.stringify(rows), finishedAt];
  const result = await prepared<{
    kind: 'account' | 'lease' | 'key_lease';
    id: string;
    cost: string;
    charged: string | null;
  }>('settle_llm_calls', { sql: settlementText(db), parameters });
  const moved = result
    .filter((r) => r.kind === 'account')
    .map((r) => ({ id: Number(r.id), cost: r.cost, charged: r.charged ?? '0' }));
  const taken = new Map(result.filter((r) => r.kind === 'lease').map((r) => [r.id, toUnits(r.cost)]));
  const keyTaken = new Map(result.filter((r) => r.kind === 'key_lease').map((r) => [r.id, toUnits(r.cost)]));
  const shortfalls = new Map<number, UsdUnits>();
  for (const m of moved)
    if (toUnits(m.cost) > toUnits(m.charged)) shortfalls.set(m.id, toUnits(m.cost) - toUnits(m.charged));
  return { accounts: moved.filter((m) => toUnits(m.charged) > 0n).map((m) => m.id), shortfalls, taken, keyTaken };
}

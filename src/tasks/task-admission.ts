import { sql } from 'kysely';
import type { AccountCache } from '../accounts/account-cache.ts';
import { lockSpendable } from '../accounts/balance-reservations.ts';
import { fromUnits } from '../accounts/money.ts';
import type { Db, DbOrTrx } from '../db/database.ts';
import { GroupCommit } from '../ops/group-commit.ts';
import type { Logger } from '../ops/logger.ts';

/** A task ready to be created: validated and priced. */
export interface Admission {
  taskId: string;
  accountId: number;
  model: string;
  provider: string;
  category: string;
  /** The input as submitted, stored for the task record. */
  input: Record<string, unknown>;
  callbackUrl: string | null;
  chargeUnits: bigint;
  idempotency?: { key: string; hash: string };
}

export type AdmissionResult =
  | { kind: 'created'; taskId: string }
  /** The same Idempotency-Key and body within 24 h: the earlier task, charged once. */
  | { kind: 'replayed'; taskId: string }
  | { kind: 'insufficient_balance' }
  | { kind: 'idempotency_conflict' };

const IDEMPOTENCY_WINDOW_MS = 24 * 3600 * 1000;

/**
 * Creates tasks and charges for them in batches (group commit). Requests arriving while a batch
 * is being written wait for the next one, so under load one transaction admits many tasks:
 * the accounts concerned are locked in id order (`FOR NO KEY UPDATE`, so instances never deadlock
 * and concurrent creates can never overdraw), each task is admitted only while the account's
 * spendable amount (balance minus open LLM holds) covers it, and the balances, ledger rows and
 * task rows are written with one statement each. Idempotency keys are checked under the same
 * account lock, so a repeated key can never create a second task, on any instance. A batch that
 * fails is retried task by task, so only the task that cannot be written fails.
 */
export class TaskAdmitter {
  private readonly commit: GroupCommit<Admission, AdmissionResult>;

  constructor(
    private readonly db: Db,
    private readonly accounts: AccountCache,
    log: Logger,
    maxBatch = 500,
    maxInFlight = 2,
  ) {
    this.commit = new GroupCommit((batch) => this.write(batch), { name: 'task admission', log, maxBatch, maxInFlight });
  }

  admit(item: Admission): Promise<AdmissionResult> {
    return this.commit.submit(item);
  }

  private async write(batch: Admission[]): Promise<AdmissionResult[]> {
    const results = await this.db.transaction().execute((trx) => admitBatch(trx, batch));
    const changed = new Set<number>();
    batch.forEach((item, i) => {
      if (results[i]?.kind === 'created') changed.add(item.accountId);
    });
    // The local cache entry is dropped at once; other instances hear it through pub/sub.
    for (const id of changed) void this.accounts.changed(id);
    return batch.map((_, i) => results[i] ?? { kind: 'insufficient_balance' });
  }
}

/** The batch's decisions, in order, with every write inside the caller's transaction. */
async function admitBatch(trx: DbOrTrx, items: Admission[]): Promise<AdmissionResult[]> {
  // NO KEY UPDATE: balances change, keys never do, so foreign-key checks elsewhere (a stored file
  // of the same account) do not wait for this lock.
  const spendable = await lockSpendable(trx, items.map((i) => i.accountId));
  const charges = new Map<number, bigint>();
  const known = await findKeyedTasks(trx, items);

  const results: AdmissionResult[] = [];
  // `charged`: what the batch has charged the account up to and including this task.
  const admitted: Array<{ item: Admission; charged: bigint }> = [];
  for (const item of items) {
    const keyId = item.idempotency && `${item.accountId}:${item.idempotency.key}`;
    const earlier = keyId ? known.get(keyId) : undefined;
    if (earlier && item.idempotency) {
      results.push(earlier.hash === item.idempotency.hash ? { kind: 'replayed', taskId: earlier.taskId } : { kind: 'idempotency_conflict' });
      continue;
    }
    const available = spendable.get(item.accountId);
    if (available === undefined || available < item.chargeUnits) {
      results.push({ kind: 'insufficient_balance' });
      continue;
    }
    spendable.set(item.accountId, available - item.chargeUnits);
    charges.set(item.accountId, (charges.get(item.accountId) ?? 0n) + item.chargeUnits);
    admitted.push({ item, charged: charges.get(item.accountId) ?? 0n });
    if (keyId && item.idempotency) known.set(keyId, { taskId: item.taskId, hash: item.idempotency.hash });
    results.push({ kind: 'created', taskId: item.taskId });
  }
  if (admitted.length === 0) return results;

  // Every write of the batch in one statement, so the account locks are held one round trip.
  const touched = [...new Set(admitted.map((a) => a.item.accountId))];
  const rows = admitted.map((a) => a.item);
  const charged = admitted.filter(({ item }) => item.chargeUnits > 0n);
  // Each ledger row's balance after it: the new balance plus what the batch charged the account after that row.
  await sql`
    with balances as (
      update accounts as a set balance_usd = a.balance_usd - v.total, updated_at = now()
      from unnest(${touched}::int[], ${touched.map((id) => fromUnits(charges.get(id) ?? 0n))}::numeric[]) as v(id, total)
      where a.id = v.id
      returning a.id, a.balance_usd
    ), created as (
      insert into tasks (id, account_id, model, provider, category, status, input, cost_usd, callback_url, idempotency_key, request_hash)
      select id, account_id, model, provider, category, 'processing', input, cost_usd, callback_url, idempotency_key, request_hash
      from unnest(${rows.map((i) => i.taskId)}::text[], ${rows.map((i) => i.accountId)}::int[], ${rows.map((i) => i.model)}::text[],
                  ${rows.map((i) => i.provider)}::text[], ${rows.map((i) => i.category)}::text[], ${rows.map((i) => JSON.stringify(i.input))}::jsonb[],
                  ${rows.map((i) => fromUnits(i.chargeUnits))}::numeric[], ${rows.map((i) => i.callbackUrl)}::text[],
                  ${rows.map((i) => i.idempotency?.key ?? null)}::text[], ${rows.map((i) => i.idempotency?.hash ?? null)}::text[])
        as t(id, account_id, model, provider, category, input, cost_usd, callback_url, idempotency_key, request_hash)
      returning id
    )
    insert into ledger_entries (account_id, amount_usd, balance_after_usd, kind, task_id, category, note)
    select l.account_id, l.amount_usd, b.balance_usd + v.total - l.cumulative, 'charge', l.task_id, l.category, l.note
    from unnest(${charged.map(({ item }) => item.accountId)}::int[], ${charged.map(({ item }) => fromUnits(-item.chargeUnits))}::numeric[],
                ${charged.map(({ charged: c }) => fromUnits(c))}::numeric[], ${charged.map(({ item }) => item.taskId)}::text[],
                ${charged.map(({ item }) => item.category)}::text[], ${charged.map(({ item }) => item.model)}::text[])
      as l(account_id, amount_usd, cumulative, task_id, category, note)
    join balances as b on b.id = l.account_id
    join unnest(${touched}::int[], ${touched.map((id) => fromUnits(charges.get(id) ?? 0n))}::numeric[]) as v(id, total) on v.id = l.account_id`.execute(trx);
  return results;
}

/**
 * Earlier tasks holding the batch's idempotency keys. A key older than the 24 h window is
 * released (cleared on the old task) so it can name a new task.
 */
async function findKeyedTasks(trx: DbOrTrx, items: Admission[]): Promise<Map<string, { taskId: string; hash: string }>> {
  const found = new Map<string, { taskId: string; hash: string }>();
  const keyed = items.filter((i) => i.idempotency);
  if (keyed.length === 0) return found;
  const rows = await trx
    .selectFrom('tasks')
    .select(['id', 'account_id', 'idempotency_key', 'request_hash', 'created_at'])
    .where((eb) => eb.or(keyed.map((i) => eb.and([eb('account_id', '=', i.accountId), eb('idempotency_key', '=', i.idempotency?.key ?? '')]))))
    .execute();
  const stale: string[] = [];
  for (const row of rows) {
    if (Date.now() - row.created_at.getTime() > IDEMPOTENCY_WINDOW_MS) stale.push(row.id);
    else found.set(`${row.account_id}:${row.idempotency_key}`, { taskId: row.id, hash: row.request_hash ?? '' });
  }
  if (stale.length) await trx.updateTable('tasks').set({ idempotency_key: null }).where('id', 'in', stale).execute();
  return found;
}

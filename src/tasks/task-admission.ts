import type { AccountCache } from '../accounts/account-cache.ts';
import { lockSpendable } from '../accounts/balance-reservations.ts';
import type { UsdUnits } from '../accounts/money.ts';
import type { Db, DbOrTrx } from '../db/database.ts';
import { GroupCommit } from '../ops/group-commit.ts';
import type { Logger } from '../ops/logger.ts';
import { type AdmittedTask, type NewTask, writeAdmittedBatch } from './task-admission.repository.ts';
import { lockKeyBudgets } from '../keys/key-holds.repository.ts';
import { findTasksByIdempotencyKeys, IDEMPOTENCY_WINDOW_MS, releaseIdempotencyKeys } from './tasks.repository.ts';

export type Admission = NewTask;

export type AdmissionResult =
  | { kind: 'created'; taskId: string }
  /** The same Idempotency-Key and body within 24 h: the earlier task, charged once. */
  | { kind: 'replayed'; taskId: string }
  | { kind: 'insufficient_balance' }
  /** The creating key's budget does not cover the price (docs/keys.md). */
  | { kind: 'key_budget_exceeded' }
  | { kind: 'idempotency_conflict' };

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
    this.accounts.changedSoon(changed);
    return batch.map((_, i) => results[i] ?? { kind: 'insufficient_balance' });
  }
}

/** The batch's decisions, in order, with every write inside the caller's transaction. */
async function admitBatch(trx: DbOrTrx, items: Admission[]): Promise<AdmissionResult[]> {
  // NO KEY UPDATE: balances change, keys never do, so foreign-key checks elsewhere (a stored file
  // of the same account) do not wait for this lock.
  const spendable = await lockSpendable(
    trx,
    items.map((i) => i.accountId),
  );
  const charges = new Map<number, UsdUnits>();
  // Then the creating keys (accounts, then keys: the lock order of every money writer).
  const keyAvailable = await lockKeyBudgets(
    trx,
    items.flatMap((i) => (i.keyId == null ? [] : [i.keyId])),
  );
  const keyCharges = new Map<number, UsdUnits>();
  const known = await findKeyedTasks(trx, items);

  const results: AdmissionResult[] = [];
  // `charged`: what the batch has charged the account up to and including this task.
  const admitted: AdmittedTask[] = [];
  for (const item of items) {
    const keyId = item.idempotency && `${item.accountId}:${item.idempotency.key}`;
    const earlier = keyId ? known.get(keyId) : undefined;
    if (earlier && item.idempotency) {
      results.push(
        earlier.hash === item.idempotency.hash
          ? { kind: 'replayed', taskId: earlier.taskId }
          : { kind: 'idempotency_conflict' },
      );
      continue;
    }
    const available = spendable.get(item.accountId);
    if (available === undefined || available < item.charge) {
      results.push({ kind: 'insufficient_balance' });
      continue;
    }
    const apiKey = item.keyId ?? null;
    const keyLeft = apiKey === null ? null : (keyAvailable.get(apiKey) ?? null);
    if (keyLeft !== null && keyLeft < item.charge) {
      results.push({ kind: 'key_budget_exceeded' });
      continue;
    }
    if (apiKey !== null) {
      if (keyLeft !== null) keyAvailable.set(apiKey, keyLeft - item.charge);
      keyCharges.set(apiKey, (keyCharges.get(apiKey) ?? 0n) + item.charge);
    }
    spendable.set(item.accountId, available - item.charge);
    charges.set(item.accountId, (charges.get(item.accountId) ?? 0n) + item.charge);
    admitted.push({ item, charged: charges.get(item.accountId) ?? 0n });
    if (keyId && item.idempotency) known.set(keyId, { taskId: item.taskId, hash: item.idempotency.hash });
    results.push({ kind: 'created', taskId: item.taskId });
  }
  if (admitted.length === 0) return results;

  await writeAdmittedBatch(trx, admitted, charges, keyCharges);
  return results;
}

/**
 * Earlier tasks holding the batch's idempotency keys. A key older than the idempotency window is
 * released (cleared on the old task) so it can name a new task.
 */
async function findKeyedTasks(
  trx: DbOrTrx,
  items: Admission[],
): Promise<Map<string, { taskId: string; hash: string }>> {
  const found = new Map<string, { taskId: string; hash: string }>();
  const keys = items.flatMap((i) => (i.idempotency ? [{ accountId: i.accountId, key: i.idempotency.key }] : []));
  const stale: string[] = [];
  for (const row of await findTasksByIdempotencyKeys(trx, keys)) {
    if (Date.now() - row.created_at.getTime() > IDEMPOTENCY_WINDOW_MS) stale.push(row.id);
    else found.set(`${row.account_id}:${row.idempotency_key}`, { taskId: row.id, hash: row.request_hash ?? '' });
  }
  await releaseIdempotencyKeys(trx, stale);
  return found;
}

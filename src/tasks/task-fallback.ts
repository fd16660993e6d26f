import * as v from 'valibot';
import { addKeySpend, refundKeySpend } from '../keys/api-keys.repository.ts';
import { lockKeyBudgets } from '../keys/key-holds.repository.ts';
import { lockSpendable } from '../accounts/llm-reservations.repository.ts';
import { modelAllowed } from '../keys/key-policy.ts';
import { applyLedgerMovement } from '../accounts/ledger.repository.ts';
import { fromUnits, toUnits, type UsdUnits } from '../accounts/money.ts';
import type { Db, DbOrTrx } from '../db/database.ts';
import { formatIssues } from '../http/validation.ts';
import type { MediaRegistry } from './media-registry.ts';
import { type CustomVoiceLookup, NO_CUSTOM_VOICES } from '../resources/custom-voices.repository.ts';
import { refusedByCallerChecks } from './caller-checks.ts';
import {
  lockForFallback,
  type RouteAttempt,
  fallbackStartOf,
  saveRouteAttempts,
  switchTaskModel,
} from './task-fallback.repository.ts';
import type { ClaimedTask } from './task-queue.repository.ts';
import { beyondMaxPriceMessage, taskPrice } from './task-price.ts';

export type FallbackOutcome = { switched: true; model: string; moneyMoved: boolean } | { switched: false };

/**
 * A media task whose upstream refused the job or failed it moves to the next model of the
 * requested model's `fallbacks` (docs/routing.md), in one transaction: the attempt is listed on
 * the record, the task is re-priced to the new model (the difference charged or refunded in the
 * ledger, and in the key's spend) and starts afresh. A fallback whose schema or `validate` hook
 * refuses the input (another provider's custom voice), whose higher price the balance or the key's budget cannot cover, or that the task's API key may
 * not use, is listed as tried and skipped. With none left the caller fails the task.
 */
export async function fallBack(
  db: Db,
  registry: MediaRegistry,
  fallbacksOf: (modelId: string) => readonly string[],
  task: ClaimedTask,
  owner: string,
  error: string,
  customVoices: CustomVoiceLookup = NO_CUSTOM_VOICES,
): Promise<FallbackOutcome> {
  // The hooks may call the provider: only for candidates the transaction could choose.
  const start = await fallbackStartOf(db, task.id);
  const candidates = start
    ? fallbacksOf(start.requested).filter((id) => !start.tried.includes(id) && modelAllowed(start.keyModels, id))
    : [];
  const { refused, checked } = await refusedByCallerChecks(
    registry,
    customVoices,
    candidates,
    task.input,
    task.account_id,
  );
  return db.transaction().execute(async (trx) => {
    const row = await lockForFallback(trx, task.id, owner);
    if (!row) return { switched: false };
    const attempts: RouteAttempt[] = [...row.attempts, { model: row.model, provider: row.provider, error }];
    const requested = (attempts[0] as RouteAttempt).model;
    const candidates = fallbacksOf(requested);
    if (candidates.length === 0) return { switched: false };
    const tried = new Set(attempts.map((a) => a.model));
    const charged = toUnits(row.costUsd);
    for (const id of candidates) {
      const next = registry.get(id);
      if (tried.has(id) || !next) continue;
      tried.add(id);
      const provider = next.entry.provider.id;
      if (!modelAllowed(row.keyModels, id)) {
        attempts.push({ model: id, provider, error: 'not a model the API key that created the task may use' });
        continue;
      }
      const parsed = v.safeParse(next.media.schema, task.input);
      if (!parsed.success) {
        attempts.push({ model: id, provider, error: `input not valid: ${formatIssues(parsed.issues)}` });
        continue;
      }
      const refusal =
        refused.get(id) ??
        (next.media.validate && !checked.has(id) ? 'input could not be checked before the fallback' : undefined);
      if (refusal !== undefined) {
        attempts.push({ model: id, provider, error: refusal });
        continue;
      }
      const usd = taskPrice(next.media.price(parsed.output));
      if (usd === undefined) {
        attempts.push({ model: id, provider, error: beyondMaxPriceMessage });
        continue;
      }
      const price = toUnits(usd);
      const difference = price - charged;
      if (difference > 0n && row.keyId !== null && !(await keyCovers(trx, task.account_id, row.keyId, difference))) {
        attempts.push({ model: id, provider, error: "the API key's budget does not cover this model" });
        continue;
      }
      if (difference !== 0n) {
        const moved = await applyLedgerMovement(trx, {
          accountId: task.account_id,
          amount: -difference,
          kind: difference > 0n ? 'charge' : 'refund',
          taskId: task.id,
          category: task.category,
          note: `fallback from ${row.model} to ${id}`,
        });
        if (moved === null) {
          attempts.push({ model: id, provider, error: 'the balance does not cover this model' });
          continue;
        }
        // The key's spend follows the account's charge: a cheaper fallback gives the difference
        // back, a dearer one adds it (its room was checked above).
        if (difference < 0n) await refundKeySpend(trx, task.id, -difference);
        else if (row.keyId !== null) await addKeySpend(trx, row.keyId, difference);
      }
      await switchTaskModel(trx, task.id, { model: id, provider, costUsd: fromUnits(price), attempts });
      return { switched: true, model: id, moneyMoved: difference !== 0n };
    }
    await saveRouteAttempts(trx, task.id, attempts);
    return { switched: false };
  });
}

/**
 * Whether the key's budget has room for a dearer fallback's difference (a key without a budget
 * always has). Locks the account, then the key: the lock order of every money writer.
 */
async function keyCovers(trx: DbOrTrx, accountId: number, keyId: number, difference: UsdUnits): Promise<boolean> {
  await lockSpendable(trx, [accountId]);
  const available = (await lockKeyBudgets(trx, [keyId])).get(keyId);
  return available === null || available === undefined || available >= difference;
}

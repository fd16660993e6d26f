import { describe, expect, test } from 'bun:test';
import { sql } from 'kysely';
import { createAccount } from '../../src/accounts/accounts.repository.ts';
import { toUnits } from '../../src/accounts/money.ts';
import type { Db } from '../../src/db/database.ts';
import {
  accountsWithPending,
  claimDeliveries,
  fillMissingAccounts,
  MAX_IN_FLIGHT_PER_ACCOUNT,
} from '../../src/webhooks/deliveries.repository.ts';
import { DATABASE_MODES, useDatabase } from '../helpers/in-process-database.ts';
import { insertTaskRow } from '../helpers/task-rows.ts';

/**
 * The fair webhook claim (src/webhooks/deliveries.repository.ts) against a real database: each
 * account gives at most its share (MAX_IN_FLIGHT_PER_ACCOUNT less what it has in flight), so an
 * account near its bound with a large backlog does not fill a claim; rows scheduled without
 * their account (an instance from before migration 0015) are found once filled in; and claims
 * made at once share the due rows.
 */
async function account(db: Db, label: string) {
  return (await createAccount(db, { email: `${label}-${crypto.randomUUID()}@example.com`, balance: toUnits(1) }))
    .account.id;
}

/** `n` pending deliveries of one task of `accountId`, due a minute ago (oldest first by `offset`). */
async function deliveries(
  db: Db,
  accountId: number,
  n: number,
  opts: { leased?: boolean; withAccount?: boolean } = {},
) {
  const taskId = await insertTaskRow(db, {
    accountId,
    status: 'failed',
    callbackUrl: 'http://example.com/hook',
    finished: true,
  });
  await sql`insert into webhook_deliveries (task_id, account_id, attempt_no, trigger, due_at, state, payload, lease_owner, lease_expires_at)
    select ${taskId}, ${opts.withAccount === false ? null : accountId}, g, 'auto', now() - interval '1 minute' + g * interval '1 millisecond',
      'pending', '{}'::jsonb, ${opts.leased ? 'other-instance' : null},
      ${opts.leased ? sql`now() + interval '1 minute'` : null}
    from generate_series(1, ${n}) g`.execute(db);
  return taskId;
}

/** A claim as the deliverer makes it: the accounts with pending rows, then their due deliveries. */
const claim = async (db: Db, owner: string, due: number) =>
  claimDeliveries(db, owner, 30_000, { due, accounts: await accountsWithPending(db, 0, 10_000) });

const owners = async (db: Db, ids: number[]) =>
  (
    await sql<{ account_id: string }>`select t.account_id from webhook_deliveries d join tasks t on t.id = d.task_id
      where d.id = any(${ids})`.execute(db)
  ).rows.map((r) => Number(r.account_id));

for (const mode of DATABASE_MODES)
  describe(`fair webhook claim (${mode})`, () => {
    const database = useDatabase(mode, 'whclaim');

    test('an account near its bound gives only what it has left; every other account its share', async () => {
      const { db } = database();
      await sql`update webhook_deliveries set state = 'done'`.execute(db);
      const busy = await account(db, 'busy');
      const quiet = await account(db, 'quiet');
      await deliveries(db, busy, MAX_IN_FLIGHT_PER_ACCOUNT - 1, { leased: true });
      await deliveries(db, busy, 500);
      await deliveries(db, quiet, 40);
      const claimed = await claim(db, 'me', 256);
      const by = await owners(
        db,
        claimed.map((c) => c.id),
      );
      expect(by.filter((a) => a === busy)).toHaveLength(1);
      expect(by.filter((a) => a === quiet)).toHaveLength(MAX_IN_FLIGHT_PER_ACCOUNT);
      // Both now at their bound: nothing more until something ends.
      expect(await claim(db, 'me', 256)).toHaveLength(0);
    });

    test('rows scheduled without their account are claimed once it is filled in', async () => {
      const { db } = database();
      await sql`update webhook_deliveries set state = 'done'`.execute(db);
      const legacy = await account(db, 'legacy');
      await deliveries(db, legacy, 3, { withAccount: false });
      expect(await claim(db, 'me', 256)).toHaveLength(0);
      await fillMissingAccounts(db);
      expect(await claim(db, 'me', 256)).toHaveLength(3);
    });

    test('the walk over accounts goes a page at a time, from where the last one stopped', async () => {
      const { db } = database();
      await sql`update webhook_deliveries set state = 'done'`.execute(db);
      const ids: number[] = [];
      for (let i = 0; i < 5; i++) {
        const id = await account(db, `walk-${i}`);
        ids.push(id);
        await deliveries(db, id, 1);
      }
      expect(await accountsWithPending(db, 0, 3)).toEqual(ids.slice(0, 3));
      expect(await accountsWithPending(db, ids[2] as number, 3)).toEqual(ids.slice(3));
      expect(await accountsWithPending(db, ids[4] as number, 3)).toEqual([]);
    });

    if (mode === 'postgres')
      test('two claims at once share the due rows instead of skipping the same ones', async () => {
        const { db } = database();
        await sql`update webhook_deliveries set state = 'done'`.execute(db);
        for (let i = 0; i < 4; i++) await deliveries(db, await account(db, `share-${i}`), 20);
        // One claim holds its rows (a transaction still open) while another claims.
        await db.transaction().execute(async (trx) => {
          const first = await claim(trx as unknown as Db, 'a', 30);
          expect(first).toHaveLength(30);
          const second = await claim(db, 'b', 30);
          expect(second).toHaveLength(30);
          const ids = new Set(first.map((c) => c.id));
          expect(second.some((c) => ids.has(c.id))).toBe(false);
        });
      });
  });

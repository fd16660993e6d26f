import { describe, expect, test } from 'bun:test';
import { sql } from 'kysely';
import { createAccount } from '../../src/accounts/accounts.repository.ts';
import { toUnits } from '../../src/accounts/money.ts';
import { countDeliveries, scheduleDelivery } from '../../src/webhooks/deliveries.repository.ts';
import { type DeliveryResult, recordResults } from '../../src/webhooks/delivery-results.ts';
import { DATABASE_MODES, useDatabase } from '../helpers/in-process-database.ts';
import { insertTaskRow } from '../helpers/task-rows.ts';

/**
 * Webhook delivery results against a real database (src/webhooks/delivery-results.ts): a
 * delivery whose result was written late, after another instance took it over (its lease ran
 * out) and sent it too, is logged twice (both sends happened) but earns one retry, not two.
 */
for (const mode of DATABASE_MODES)
  describe(`webhook delivery results (${mode})`, () => {
    const database = useDatabase(mode, 'webhookresults');

    test('two results of one delivery log two attempts and schedule one retry', async () => {
      const { db } = database();
      const { account } = await createAccount(db, { email: `hooks-${Date.now()}@example.com`, balance: toUnits(1) });
      const taskId = await insertTaskRow(db, {
        accountId: account.id,
        status: 'failed',
        callbackUrl: 'https://example.com/hook',
        finished: true,
      });
      const payload = { task_id: taskId, status: 'failed' };
      const id = await db
        .transaction()
        .execute((trx) => scheduleDelivery(trx, { taskId, attemptNo: 1, trigger: 'auto', payload }));
      const result = (instance: string): DeliveryResult => ({
        delivery: {
          id,
          task_id: taskId,
          attempt_no: 1,
          trigger: 'auto',
          payload,
          callback_url: 'https://example.com/hook',
          finished_at: new Date(),
          webhook_signing_enabled: false,
          webhook_secret: null,
        },
        sentAt: new Date(),
        status: 500,
        statusText: `refused ${instance}`,
      });
      const first = await db.transaction().execute((trx) => recordResults(trx, [result('a')], [60, 120]));
      const second = await db.transaction().execute((trx) => recordResults(trx, [result('b')], [60, 120]));
      expect(first).toHaveLength(1);
      // The late one scheduled a second retry of its own (two attempt 2s, each sent).
      expect(second).toHaveLength(0);
      expect(await countDeliveries(db, taskId)).toEqual({ made: 1, pending: 1 });
      const { rows } = await sql<{
        n: string;
      }>`select count(*) as n from callback_attempts where task_id = ${taskId}`.execute(db);
      expect(Number(rows[0]?.n)).toBe(2);
    });
  });

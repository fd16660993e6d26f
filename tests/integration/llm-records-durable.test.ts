import { afterAll, expect, test } from 'bun:test';
import { api, createAccount, uniqueEmail } from '../helpers/api.ts';
import { startGateway, type GatewayProcess } from '../helpers/gateway-process.ts';
import { REDIS_URL, createTestDatabase, queryDatabase } from '../helpers/services.ts';

const running: GatewayProcess[] = [];
afterAll(async () => {
  await Promise.all(running.map((gw) => gw.stop('SIGKILL')));
});

/**
 * LLM call records are written in batches off the request path; a graceful stop must write
 * every answered call's task and charge before exiting, and the balance must equal the sum of
 * the account's ledger entries.
 */
test('SIGTERM right after a burst of LLM calls loses no task and no charge', async () => {
  const databaseUrl = await createTestDatabase('llmdurable');
  const gw = await startGateway({
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    REDIS_KEY_PREFIX: `${new URL(databaseUrl).pathname.slice(1)}:`,
  });
  running.push(gw);
  const { userId, key } = await createAccount(gw, uniqueEmail('durable'), 3);

  const calls = 40;
  const answers = await Promise.all(
    Array.from({ length: calls }, (_, i) =>
      api(gw, 'POST', '/v1/chat/completions', {
        key,
        body: { model: 'sandbox/echo', messages: [{ role: 'user', content: `call number ${i}` }] },
      }),
    ),
  );
  expect(answers.every((a) => a.status === 200)).toBe(true);
  // Stop at once: the 50 ms batch window has most likely not elapsed yet.
  expect(await gw.stop('SIGTERM')).toBe(0);

  const tasks = await queryDatabase<{ n: string; cost: string }>(
    databaseUrl,
    "select count(*) as n, sum(cost_usd) as cost from tasks where account_id = $1 and category = 'llm'",
    [userId],
  );
  expect(Number(tasks[0]?.n)).toBe(calls);
  // 3 input tokens ("call number i") at $1/M and 4 output tokens ("echo: call number i") at $2/M per call.
  expect(Number(tasks[0]?.cost)).toBeCloseTo(calls * 0.000011, 10);

  const [account] = await queryDatabase<{ balance_usd: string }>(
    databaseUrl,
    'select balance_usd from accounts where id = $1',
    [userId],
  );
  const [ledger] = await queryDatabase<{ total: string; charges: string }>(
    databaseUrl,
    "select sum(amount_usd) as total, count(*) filter (where kind = 'charge') as charges from ledger_entries where account_id = $1",
    [userId],
  );
  expect(Number(ledger?.charges)).toBe(calls);
  expect(account?.balance_usd).toBe(Number(ledger?.total).toFixed(10));
  expect(Number(account?.balance_usd)).toBeCloseTo(3 - calls * 0.000011, 10);
});

/**
 * How often concurrent LLM calls of one account wait for their instance's lease to grow, and what
 * the hold costs them, in process against the local Postgres (docs/money.md, "Leases"). Each of C
 * callers loops: hold the call's worst case, wait 1 ms (the upstream), settle through the usage
 * recorder (a real settlement statement, a tenth of the hold charged), as the LLM path does. Run
 * with the lease's headroom fixed at three holds (`maxStretch: 3`, the earlier behaviour) and
 * adaptive (the default), alternately.
 *
 *   bun run bench/lease-growth.ts [--seconds 4] [--concurrency 1,16,64]
 */
import { AccountCache } from '../src/accounts/account-cache.ts';
import { createAccount } from '../src/accounts/accounts.repository.ts';
import { BalanceReservations } from '../src/accounts/balance-reservations.ts';
import { toUnits } from '../src/accounts/money.ts';
import { connectDatabase } from '../src/db/connect.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { UsageRecorder } from '../src/llm/usage-recorder.ts';
import { Logger } from '../src/ops/logger.ts';
import { connectStore } from '../src/store/connect.ts';
import { createTestDatabase, dropTestDatabases } from '../tests/helpers/services.ts';
import { stringArg } from './lib/cli-args.ts';

const SECONDS = Number(stringArg('--seconds', '4'));
const CONCURRENCY = stringArg('--concurrency', '1,16,64').split(',').map(Number);
const HOLD = toUnits(0.004); // a chat call's worst case: ~1,000 tokens in, 1,000 out
const COST = 0.0004;

const store = await connectStore(undefined, 'bench-lease:');
const log = new Logger('warn');
const q = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * p)] ?? Number.NaN;

/** Each row on a fresh database: the settlement's cost must not depend on how many rows ran before. */
async function run(concurrency: number, maxStretch: number | undefined) {
  const databaseUrl = await createTestDatabase('benchlease');
  const database = await connectDatabase({ databaseUrl, dataDir: '/tmp' });
  await migrateToLatest(database.db);
  const reservations = new BalanceReservations(database.db, log, { maxStretch }, database.prepared);
  const recorder = new UsageRecorder(
    database.db,
    new AccountCache(database.db, store),
    reservations,
    log,
    undefined,
    database.prepared,
  );
  const { account } = await createAccount(database.db, {
    email: `lease-${crypto.randomUUID()}@x`,
    balance: toUnits(1000),
  });
  const holds: number[] = [];
  const calls: number[] = [];
  const until = performance.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        const started = performance.now();
        const held = await reservations.reserve(account.id, HOLD);
        holds.push(performance.now() - started);
        if (!held.ok) throw new Error('hold refused');
        await Bun.sleep(1);
        await recorder.record({
          taskId: crypto.randomUUID(),
          accountId: account.id,
          model: 'bench/model',
          provider: 'bench',
          status: 'completed',
          input: {},
          output: null,
          costUsd: COST,
          createdAt: new Date(),
          reservationId: held.id,
        });
        calls.push(performance.now() - started);
      }
    }),
  );
  await recorder.stop();
  await reservations.stop();
  await database.close();
  await dropTestDatabases([databaseUrl]);
  const n = calls.length;
  return {
    rate: n / SECONDS,
    growthsPer1000: (reservations.growths / n) * 1000,
    holdP50: q(holds, 0.5),
    holdP99: q(holds, 0.99),
    callP50: q(calls, 0.5),
    callP99: q(calls, 0.99),
  };
}

console.log(
  `${SECONDS} s per row; hold $0.004, charge $0.0004, 1 ms upstream; load ${(await Bun.file('/proc/loadavg').text()).trim()}\n`,
);
console.log(
  '| callers | lease headroom | calls/s | growths per 1,000 calls | hold p50 ms | hold p99 ms | call p50 ms | call p99 ms |',
);
console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
const f = (x: number, d = 3) => x.toFixed(d);
for (const c of CONCURRENCY)
  for (const [label, max] of [
    ['3 holds (fixed)', 3],
    ['adaptive', undefined],
  ] as const) {
    const r = await run(c, max);
    console.log(
      `| ${c} | ${label} | ${f(r.rate, 0)} | ${f(r.growthsPer1000, 1)} | ${f(r.holdP50)} | ${f(r.holdP99)} | ${f(r.callP50)} | ${f(r.callP99)} |`,
    );
  }
await store.close();

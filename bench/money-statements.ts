/**
 * What the LLM money statements cost against the local Postgres, in process: the hold grant and
 * the settlement of docs/money.md, sequentially, beside a bare round trip and a one-row
 * autocommit insert (the synchronous-commit floor). Prints a Markdown table.
 *
 *   bun run bench/money-statements.ts [--calls 1200] [--warmup 300]
 */
import { sql } from 'kysely';
import { AccountCache } from '../src/accounts/account-cache.ts';
import { createAccount } from '../src/accounts/accounts.repository.ts';
import { toUnits } from '../src/accounts/money.ts';
import { BalanceReservations } from '../src/accounts/balance-reservations.ts';
import { connectDatabase } from '../src/db/connect.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { UsageRecorder } from '../src/llm/usage-recorder.ts';
import { Logger } from '../src/ops/logger.ts';
import { connectStore } from '../src/store/connect.ts';
import { createTestDatabase, dropTestDatabases } from '../tests/helpers/services.ts';
import { numberArg } from './lib/cli-args.ts';

const CALLS = numberArg('--calls', 1200);
const WARMUP = numberArg('--warmup', 300);

const databaseUrl = await createTestDatabase('benchmoney');
const database = await connectDatabase({ databaseUrl, dataDir: '/tmp' });
await migrateToLatest(database.db);
const store = await connectStore(undefined, 'bench-money:');
const log = new Logger('warn');
const reservations = new BalanceReservations(database.db, log, {}, database.prepared);
const recorder = new UsageRecorder(
  database.db,
  new AccountCache(database.db, store),
  reservations,
  log,
  undefined,
  database.prepared,
);
const { account } = await createAccount(database.db, {
  email: `bench-${Date.now()}@example.com`,
  balance: toUnits(1000),
});

const samples = { grant: [] as number[], settle: [] as number[], roundTrip: [] as number[], insert: [] as number[] };
const time = async (into: number[] | undefined, run: () => Promise<unknown>) => {
  const started = performance.now();
  const result = await run();
  into?.push(performance.now() - started);
  return result;
};
for (let i = 0; i < WARMUP + CALLS; i++) {
  const keep = i >= WARMUP;
  const hold = (await time(keep ? samples.grant : undefined, () => reservations.reserve(account.id, 1000n))) as Awaited<
    ReturnType<typeof reservations.reserve>
  >;
  await time(keep ? samples.settle : undefined, () =>
    recorder.record({
      taskId: crypto.randomUUID(),
      accountId: account.id,
      model: 'bench/model',
      provider: 'bench',
      status: 'completed',
      input: {},
      output: null,
      costUsd: 0.000001,
      createdAt: new Date(),
      reservationId: hold.ok ? hold.id : undefined,
    }),
  );
  await time(keep ? samples.roundTrip : undefined, () => sql`select 1`.execute(database.db));
  await time(keep ? samples.insert : undefined, () =>
    sql`insert into dead_letters (kind, payload, error) values ('bench', '', '')`.execute(database.db),
  );
}
const q = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * p)]?.toFixed(2) ?? 'n/a';
const rows: Array<[string, number[]]> = [
  ['`SELECT 1` (round-trip floor through kysely + pg)', samples.roundTrip],
  ['one-row autocommit insert (round trip + WAL flush)', samples.insert],
  ['hold (from the instance lease; a growth of the lease is one statement)', samples.grant],
  ['settlement (one statement, named prepared, synchronous commit)', samples.settle],
];
console.log(`${CALLS} sequential grant + settle pairs after ${WARMUP} warm-up\n`);
console.log('| statement | p50 ms | p90 ms | p99 ms |\n| --- | --- | --- | --- |');
for (const [label, xs] of rows) console.log(`| ${label} | ${q(xs, 0.5)} | ${q(xs, 0.9)} | ${q(xs, 0.99)} |`);
await recorder.stop();
await store.close();
await database.close();
await dropTestDatabases([databaseUrl]);

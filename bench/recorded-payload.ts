/**
 * What a call's recorded conversation costs its settlement, by size and by how Postgres
 * compresses it (migration 0010: lz4 where the server has it, pglz before and on PGlite). A
 * non-streamed answer waits for this statement's commit (docs/money.md). In process, against the
 * local Postgres: one call settled at a time, as a lone call's is, alternating a database with
 * the migrations as they are (lz4) and one whose `tasks.input` and `tasks.output` are set back to
 * pglz, `--rounds` times. Prints a Markdown table: the statement's wall time (p50) and its
 * Postgres backend's CPU per statement.
 *
 *   bun run bench/recorded-payload.ts [--calls 300] [--rounds 3]
 *
 * Messages are word-like text (tests/helpers/prose.ts) of at most 4,000 characters, since the
 * recorder cuts longer strings (src/llm/record-input.ts): a long conversation is many messages.
 */
import { sql } from 'kysely';
import { createAccount } from '../src/accounts/accounts.repository.ts';
import { toUnits } from '../src/accounts/money.ts';
import { connectDatabase, type DatabaseHandle } from '../src/db/connect.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { settleLlmCalls } from '../src/llm/llm-settlement.repository.ts';
import { conversation, prose } from '../tests/helpers/prose.ts';
import { settlementRow } from '../tests/helpers/settlement-row.ts';
import { createTestDatabase, dropTestDatabases } from '../tests/helpers/services.ts';
import { numberArg } from './lib/cli-args.ts';
import { backendCpu, backendCpuSince } from './lib/postgres-backend-cpu.ts';
import { table } from './lib/wrk.ts';

const CALLS = numberArg('--calls', 300);
const ROUNDS = numberArg('--rounds', 3);
/** [messages, characters each]: a short call, then longer conversations. */
const SIZES: Array<[number, number]> = [
  [2, 100],
  [8, 2000],
  [30, 2000],
  [60, 4000],
];

interface Setup {
  label: 'lz4' | 'pglz';
  url: string;
  database: DatabaseHandle;
  accountId: number;
}

/** `lz4`: the database as migrated (where the server has lz4); `pglz`: its payload columns set back. */
async function setUp(label: 'lz4' | 'pglz'): Promise<Setup> {
  const url = await createTestDatabase(`recpayload${label}`);
  const database = await connectDatabase({ databaseUrl: url, dataDir: '/tmp' });
  await migrateToLatest(database.db);
  if (label === 'pglz')
    await sql`alter table tasks alter column input set compression pglz, alter column output set compression pglz`.execute(
      database.db,
    );
  const { account } = await createAccount(database.db, {
    email: `recorded-${label}-${Date.now()}@example.com`,
    balance: toUnits(1_000_000),
  });
  return { label, url, database, accountId: account.id };
}

/** Settles `CALLS` one-call batches of a conversation of `size`, one after another. */
async function run(s: Setup, [count, chars]: [number, number]): Promise<{ wallMs: number; cpuMs: number }> {
  const messages = conversation(count, chars);
  const call = () =>
    settleLlmCalls(s.database.db, s.database.prepared, [
      settlementRow({
        id: crypto.randomUUID(),
        account_id: s.accountId,
        input: { model: 'bench/model', messages },
        output: { role: 'assistant', content: prose(1500, count) },
      }),
    ]);
  for (let i = 0; i < 30; i++) await call(); // the statement prepared and its plan cached
  const before = await backendCpu(s.url);
  const walls: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const started = performance.now();
    await call();
    walls.push(performance.now() - started);
  }
  const cpu = backendCpuSince(before, await backendCpu(s.url));
  walls.sort((a, b) => a - b);
  return { wallMs: walls[Math.floor(walls.length / 2)] ?? Number.NaN, cpuMs: (cpu * 1000) / CALLS };
}

const setups = [await setUp('lz4'), await setUp('pglz')];
try {
  const kinds = await sql<{ c: string }>`select attcompression as c from pg_attribute
    where attrelid = 'tasks'::regclass and attname = 'input'`.execute(setups[0]!.database.db);
  if (kinds.rows[0]?.c !== 'l') process.stderr.write('note: this Postgres has no lz4; both columns are pglz\n');
  const results = new Map<string, Array<{ wallMs: number; cpuMs: number }>>();
  for (let round = 0; round < ROUNDS; round++)
    for (const size of SIZES)
      for (const s of setups) {
        const key = `${size.join('x')} ${s.label}`;
        results.set(key, [...(results.get(key) ?? []), await run(s, size)]);
        process.stderr.write('.');
      }
  process.stderr.write('\n');
  const show = (xs: Array<{ wallMs: number; cpuMs: number }>, k: 'wallMs' | 'cpuMs') =>
    xs.map((x) => x[k].toFixed(2)).join(' / ');
  const rows = SIZES.map(([count, chars]) => {
    const recorded = JSON.stringify(conversation(count, chars)).length;
    const lz4 = results.get(`${count}x${chars} lz4`) ?? [];
    const pglz = results.get(`${count}x${chars} pglz`) ?? [];
    return {
      conversation: `${count} messages of ${chars} characters (${Math.round(recorded / 1024)} KB)`,
      'statement p50 ms, pglz': show(pglz, 'wallMs'),
      'statement p50 ms, lz4': show(lz4, 'wallMs'),
      'Postgres CPU ms per statement, pglz': show(pglz, 'cpuMs'),
      'Postgres CPU ms per statement, lz4': show(lz4, 'cpuMs'),
    };
  });
  console.log(`${CALLS} one-call settlements per cell, ${ROUNDS} alternated rounds (each figure one round)\n`);
  console.log(table(rows));
} finally {
  for (const s of setups) await s.database.close();
  await dropTestDatabases(setups.map((s) => s.url));
}

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { sql } from 'kysely';
import { AccountCache } from '../../src/accounts/account-cache.ts';
import { BalanceReservations } from '../../src/accounts/balance-reservations.ts';
import { createAccount } from '../../src/accounts/accounts.repository.ts';
import { toUnits } from '../../src/accounts/money.ts';
import { connectDatabase, type DatabaseHandle } from '../../src/db/connect.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { UsageRecorder, type LlmCallRecord } from '../../src/llm/usage-recorder.ts';
import { Logger } from '../../src/ops/logger.ts';
import { connectStore } from '../../src/store/connect.ts';
import type { Store } from '../../src/store/store.ts';
import { TaskAdmitter, type Admission } from '../../src/tasks/task-admission.ts';
import { createTestDatabase } from '../helpers/services.ts';

/**
 * The money writers against real Postgres, in process: holds never overdraw under concurrency,
 * settlement never takes a balance below zero, and one unwritable row never fails its batch.
 */
let database: DatabaseHandle;
let store: Store;
let accounts: AccountCache;
let reservations: BalanceReservations;
let recorder: UsageRecorder;
const log = new Logger('silent');

beforeAll(async () => {
  database = await connectDatabase({ databaseUrl: await createTestDatabase('moneywriters'), dataDir: '/tmp' });
  await migrateToLatest(database.db);
  store = await connectStore(undefined, 'mw:');
  accounts = new AccountCache(database.db, store);
  // The hot statements on the runner the gateway gives them (bootstrap.ts): Bun's client on Postgres.
  reservations = new BalanceReservations(database.db, log, { ttlMs: 200 }, database.prepared);
  recorder = new UsageRecorder(database.db, accounts, reservations, log, undefined, database.prepared);
});
afterAll(async () => {
  await recorder.stop();
  await store.close();
  await database.close();
});

let n = 0;
async function account(balanceUsd: number): Promise<number> {
  const { account: row } = await createAccount(database.db, {
    email: `mw-${Date.now()}-${n++}@example.com`,
    balance: toUnits(balanceUsd),
  });
  return row.id;
}

async function money(id: number): Promise<{ balance: bigint; reserved: bigint; ledger: bigint; holds: number }> {
  const row = await database.db
    .selectFrom('accounts')
    .select(['balance_usd', 'reserved_usd'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  const sum = await sql<{
    total: string;
  }>`select coalesce(sum(amount_usd), 0) as total from ledger_entries where account_id = ${id}`.execute(database.db);
  const holds = await database.db.selectFrom('llm_reservations').select('id').where('account_id', '=', id).execute();
  return {
    balance: toUnits(row.balance_usd),
    reserved: toUnits(row.reserved_usd),
    ledger: toUnits(sum.rows[0]?.total ?? '0'),
    holds: holds.length,
  };
}

function call(
  accountId: number,
  costUsd: number,
  reservationId?: string,
  input: unknown = { messages: [] },
): LlmCallRecord {
  return {
    taskId: crypto.randomUUID(),
    accountId,
    model: 'sandbox/echo',
    provider: 'sandbox',
    status: 'completed',
    input,
    output: null,
    costUsd,
    createdAt: new Date(),
    reservationId,
  };
}

describe('holds', () => {
  test('a busy lease grows its headroom, but never past a 32nd of what the account can spend', async () => {
    const id = await account(100);
    const pool = new BalanceReservations(database.db, log);
    const settle = new UsageRecorder(database.db, accounts, pool, log);
    // Calls back to back, each charged its whole hold: a lease of four holds runs short every four calls.
    for (let i = 0; i < 300; i++) {
      const held = await pool.reserve(id, toUnits(0.01));
      if (!held.ok) throw new Error('refused');
      await settle.record(call(id, 0.01, held.id));
      const row = await database.db
        .selectFrom('llm_reservations')
        .select('amount_usd')
        .where('account_id', '=', id)
        .executeTakeFirst();
      const m = await money(id);
      const spendable = m.balance - m.reserved;
      const leased = toUnits(row?.amount_usd ?? '0');
      // The call and three more of its size, or at most a 32nd of what was spendable before it grew.
      expect(leased).toBeLessThanOrEqual(toUnits(0.04) + (spendable + leased) / 32n + 1n);
    }
    expect(pool.growths).toBeLessThan(300 / 4 / 4);
    expect((await money(id)).balance).toBe(toUnits(97));
    await settle.stop();
    await pool.stop();
  });

  test('200 parallel holds of $0.01 on $1 grant exactly 100; the rest are told what is left', async () => {
    const id = await account(1);
    const results = await Promise.all(Array.from({ length: 200 }, () => reservations.reserve(id, toUnits(0.01))));
    expect(results.filter((r) => r.ok).length).toBe(100);
    expect(results.filter((r) => !r.ok).every((r) => !r.ok && r.availableUnits === 0n)).toBe(true);
    const m = await money(id);
    // All of it is held, by this instance's one lease on the account.
    expect(m.reserved).toBe(toUnits(1));
    expect(m.holds).toBe(1);
    // Two instances share the account exactly: a second one can lease nothing more.
    const other = new BalanceReservations(database.db, log);
    const refused = await other.reserve(id, 1n);
    expect(refused.ok).toBe(false);
    for (const r of results) if (r.ok) reservations.release(r.id);
    await reservations.returnIdle();
    await Bun.sleep(600);
    await reservations.returnIdle();
    expect((await money(id)).reserved).toBe(0n);
    expect((await other.reserve(id, toUnits(0.5))).ok).toBe(true);
    await other.stop();
  });

  test('settlement charges the real cost, frees the hold, and never goes below zero', async () => {
    const id = await account(0.05);
    const a = await reservations.reserve(id, toUnits(0.03));
    const b = await reservations.reserve(id, toUnits(0.02));
    expect(a.ok && b.ok).toBe(true);
    if (!a.ok || !b.ok) return;
    // a costs less than held; b costs far more than held and than is left: charged at most what is left.
    await Promise.all([recorder.record(call(id, 0.01, a.id)), recorder.record(call(id, 0.5, b.id))]);
    await Bun.sleep(600);
    await reservations.returnIdle();
    const m = await money(id);
    expect(m.holds).toBe(0);
    expect(m.reserved).toBe(0n);
    // a paid 0.01, b at least its own hold (0.02): never below zero, never more than there was.
    expect(m.balance >= 0n && m.balance <= toUnits(0.02)).toBe(true);
    expect(m.ledger).toBe(m.balance);
  });

  test('a call never spends money another call holds', async () => {
    const id = await account(0.1);
    const held = await reservations.reserve(id, toUnits(0.08));
    const mine = await reservations.reserve(id, toUnits(0.01));
    if (!held.ok || !mine.ok) throw new Error('holds refused');
    await recorder.record(call(id, 1, mine.id));
    const m = await money(id);
    // Charged at most its own hold plus what nobody holds: the other call's 0.08 stays whole.
    expect(m.balance >= toUnits(0.08)).toBe(true);
    expect(m.balance <= toUnits(0.09)).toBe(true);
    expect(m.reserved >= toUnits(0.08)).toBe(true);
    expect(m.ledger).toBe(m.balance);
    reservations.release(held.id);
    await Bun.sleep(600);
    await reservations.returnIdle();
    expect((await money(id)).reserved).toBe(0n);
  });

  test('holds of an instance that died expire and are swept', async () => {
    const id = await account(1);
    const other = new BalanceReservations(database.db, log, { ttlMs: 100 });
    const hold = await other.reserve(id, toUnits(0.4));
    expect(hold.ok).toBe(true);
    expect((await money(id)).reserved >= toUnits(0.4)).toBe(true);
    // `other` never renews (it "died"); any instance's sweep releases the hold once expired.
    await Bun.sleep(250);
    await reservations.tick();
    const m = await money(id);
    expect(m.reserved).toBe(0n);
    expect(m.holds).toBe(0);
    expect(m.balance).toBe(toUnits(1));
  });
});

describe('settlement statement', () => {
  test('finds already recorded calls by primary key however much the tasks table grew since it was planned', async () => {
    const id = await account(1000);
    const pool = new BalanceReservations(database.db, log, {}, database.prepared);
    const settle = new UsageRecorder(database.db, accounts, pool, log, undefined, database.prepared);
    // Enough runs for Postgres to settle on a cached (generic) plan while tasks is small…
    for (let i = 0; i < 20; i++) await settle.record(call(id, 0.0001));
    // …then the table grows well past what that plan was made for.
    await Promise.all(Array.from({ length: 4000 }, () => settle.record(call(id, 0.0001))));
    const seqScans = async () => {
      const row = await sql<{
        n: string;
      }>`select seq_scan::text as n from pg_stat_user_tables where relname = 'tasks'`.execute(database.db);
      return Number(row.rows[0]?.n);
    };
    // A backend reports its table statistics when idle, at most once a second: wait for the burst's.
    await Bun.sleep(1500);
    await settle.record(call(id, 0.0001));
    await Bun.sleep(1500);
    const before = await seqScans();
    for (let i = 0; i < 30; i++) await settle.record(call(id, 0.0001));
    await Bun.sleep(1500);
    await settle.record(call(id, 0.0001));
    await Bun.sleep(1500);
    // 31 settlements: with the inline probe's cached plan each scanned the whole table.
    expect((await seqScans()) - before).toBe(0);
    await settle.stop();
    await pool.stop();
  }, 30_000);

  test('a call recorded again (a batch retried after a commit it did not hear of) is charged once', async () => {
    const id = await account(1);
    const first = call(id, 0.1);
    await recorder.record(first);
    await recorder.record(first);
    const m = await money(id);
    expect(m.balance).toBe(toUnits(0.9));
    expect(m.ledger).toBe(m.balance);
  });

  test('a batch holding a recorded call and a new one charges the new one only', async () => {
    const id = await account(1);
    const old = call(id, 0.1);
    await recorder.record(old);
    // Submitted together while another write is under way, the two share the next batch.
    const fresh = call(id, 0.2);
    await Promise.all([recorder.record(call(id, 0.01)), recorder.record(old), recorder.record(fresh)]);
    const m = await money(id);
    expect(m.balance).toBe(toUnits(0.69));
    expect(m.ledger).toBe(m.balance);
    const tasks = await database.db.selectFrom('tasks').select('cost_usd').where('account_id', '=', id).execute();
    expect(tasks.map((t) => toUnits(t.cost_usd)).sort()).toEqual([toUnits(0.01), toUnits(0.1), toUnits(0.2)].sort());
  });
});

describe('one bad row never fails its batch', () => {
  test('usage: a record Postgres cannot store goes to dead_letters; the rest of its batch is billed', async () => {
    const ids = await Promise.all([account(1), account(1), account(1)]);
    const good = ids.map((id) => call(id, 0.001));
    const poison = [
      call(ids[0] as number, 0.001, undefined, { text: 'nul \u0000 here' }),
      call(ids[1] as number, 0.001, undefined, { text: 'lone \ud800 surrogate' }),
      call(ids[2] as number, 0.001, undefined, JSON.parse(`${'['.repeat(20_000)}${']'.repeat(20_000)}`)),
    ];
    // All submitted at once: they share batches.
    await Promise.all([...good, ...poison].map((r) => recorder.record(r)));
    for (const id of ids) {
      const m = await money(id);
      expect(m.balance).toBe(toUnits(1) - toUnits(0.001));
      expect(m.ledger).toBe(m.balance);
    }
    const written = await database.db
      .selectFrom('tasks')
      .select('id')
      .where(
        'id',
        'in',
        good.map((r) => r.taskId),
      )
      .execute();
    expect(written.length).toBe(3);
    const dead = await database.db
      .selectFrom('dead_letters')
      .select(['payload', 'error'])
      .where('kind', '=', 'llm_usage')
      .execute();
    for (const p of poison) expect(dead.some((d) => d.payload.includes(p.taskId))).toBe(true);
    // Billing goes on: the next record is written at once.
    const next = call(ids[0] as number, 0.002);
    await recorder.record(next);
    expect((await money(ids[0] as number)).balance).toBe(toUnits(1) - toUnits(0.003));
  });

  test('tasks: a create Postgres cannot store fails alone; other accounts in its batch are created', async () => {
    const admitter = new TaskAdmitter(database.db, accounts, log);
    const ids = await Promise.all(Array.from({ length: 8 }, () => account(1)));
    const item = (accountId: number, input: Record<string, unknown>): Admission => ({
      taskId: crypto.randomUUID(),
      accountId,
      model: 'sandbox/image',
      provider: 'sandbox',
      category: 'image',
      input,
      callbackUrl: null,
      charge: toUnits(0.01),
    });
    const good = ids.map((id) => item(id, { prompt: 'a fox' }));
    const bad = [item(ids[0] as number, { prompt: 'nul \u0000' }), item(ids[1] as number, { prompt: '\udfff' })];
    const settled = await Promise.allSettled([...good, ...bad].map((i) => admitter.admit(i)));
    expect(settled.slice(0, good.length).every((s) => s.status === 'fulfilled' && s.value.kind === 'created')).toBe(
      true,
    );
    expect(settled.slice(good.length).every((s) => s.status === 'rejected')).toBe(true);
    for (const id of ids) expect((await money(id)).balance).toBe(toUnits(0.99));
  });
});

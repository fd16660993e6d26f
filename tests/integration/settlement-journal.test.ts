import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtemp, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { api, createAccount, uniqueEmail } from '../helpers/api.ts';
import { callsUntilKilled } from '../helpers/calls-until-killed.ts';
import { type GatewayProcess, MODES, startGateway } from '../helpers/gateway-process.ts';
import { POSTGRES_URL, REDIS_URL, createTestDatabase, queryDatabase } from '../helpers/services.ts';
import { SettlementJournal } from '../../src/llm/settlement-journal.ts';
import { settlementRow } from '../helpers/settlement-row.ts';

/**
 * The settlement journal (SETTLEMENT_JOURNAL=true, docs/money.md): a call is answered once its
 * charge is on local disk, and settled in the database after the answer. Nothing answered may go
 * unbilled across kill -9, nothing may be billed twice when the journal is replayed over
 * settlements that did commit, and a read on the process sees the account's own answered calls.
 */
const running: GatewayProcess[] = [];
afterAll(async () => {
  await Promise.all(running.map((gw) => gw.stop('SIGKILL')));
});

async function start(env: Record<string, string>) {
  const gw = await startGateway(env);
  running.push(gw);
  return gw;
}

async function postgresEnv(label: string) {
  const databaseUrl = await createTestDatabase(label);
  const env = {
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    REDIS_KEY_PREFIX: `${new URL(databaseUrl).pathname.slice(1)}:`,
    DATA_DIR: await mkdtemp(join(tmpdir(), `gw-${label}-`)),
    SETTLEMENT_JOURNAL: 'true',
    LOG_LEVEL: 'warn',
  };
  return { env, databaseUrl };
}

const chat = (gw: GatewayProcess, key: string, content: string) =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'sandbox/echo', messages: [{ role: 'user', content }] }),
  });

describe('settlement journal', () => {
  for (const mode of MODES) {
    test(`${mode.name}: kill -9 under load, every call answered in full is billed once after restart, and the journal is emptied`, async () => {
      const env = {
        ...(await mode.env('journalkill')),
        SETTLEMENT_JOURNAL: 'true',
        LOG_LEVEL: 'warn',
        RATE_LIMIT_PER_MINUTE: '1000000',
        // The smallest segment: the run moves between the two many times, and is killed in any of them.
        SETTLEMENT_JOURNAL_SEGMENT_BYTES: '65536',
      } as Record<string, string>;
      env.DATA_DIR ??= await mkdtemp(join(tmpdir(), 'gw-journalkill-'));
      const gw = await start(env);
      const { key } = await createAccount(gw, uniqueEmail('journalkill'), 100);
      const sizes = watchJournalSizes(env.DATA_DIR);
      const answered = await callsUntilKilled(gw, key, { workers: 16, forMs: 1_500 });
      sizes.stop();
      expect(answered.length).toBeGreaterThan(50);
      // Both segments were used, and neither grew past its first zero-filled mebibyte.
      expect(sizes.max).toEqual([1024 * 1024, 1024 * 1024]);

      const restarted = await start(env);
      const tasks = await listLlmTasks(restarted, key);
      const ids = new Set(tasks.map((t) => t.output?.id));
      expect(answered.filter((id) => !ids.has(id))).toEqual([]);
      // Every record is charged once: balance = top-up − the charges of the task records.
      const charged = tasks.reduce((sum, t) => sum + t.cost, 0);
      const account = await api(restarted, 'GET', '/v1/account', { key });
      expect(account.body.data.balance_usd).toBeCloseTo(100 - charged, 9);
      expect(new Set(tasks.map((t) => t.task_id)).size).toBe(tasks.length);
      for (const file of ['settlements-0.log', 'settlements-0.1.log'])
        expect((await stat(join(env.DATA_DIR, 'journal', file))).size).toBe(0);
      expect(restarted.output()).toContain('replayed the settlement journal');
    }, 120_000);
  }

  test('a call is answered while its database settlement is held up; killed then, it is billed once after restart', async () => {
    const { env, databaseUrl } = await postgresEnv('journalheld');
    const gw = await start(env);
    const { userId, key } = await createAccount(gw, uniqueEmail('journalheld'), 1);
    const blocker = await holdSettlements(databaseUrl);
    const started = performance.now();
    const res = await chat(gw, key, 'answered before the database knows');
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(performance.now() - started).toBeLessThan(2_000);
    // Answered, not yet in the database: the gauges say so.
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toMatch(/^gateway_llm_unsettled_calls 1$/m);
    expect(metrics).toMatch(/^gateway_settlement_journal_up 1$/m);
    // The first append zero-filled the first mebibyte of segment 0; segment 1 is still empty.
    expect(metrics).toMatch(/^gateway_settlement_journal_file_bytes 1048576$/m);
    // The read waits for the account's own settlement (up to 2 s), which the lock holds up.
    const readStarted = performance.now();
    const read = api(gw, 'GET', '/v1/account', { key });
    await Bun.sleep(300);
    await blocker.query('rollback');
    await blocker.end();
    const account = await read;
    expect(performance.now() - readStarted).toBeGreaterThan(250);
    const [row] = await queryDatabase<{ cost_usd: string }>(
      databaseUrl,
      "select cost_usd from tasks where account_id = $1 and output->>'id' = $2",
      [userId, body.id],
    );
    expect(Number(row?.cost_usd)).toBeGreaterThan(0);
    expect(account.body.data.balance_usd).toBeCloseTo(1 - Number(row?.cost_usd), 9);

    // Held up again, killed with the settlement unsent or in flight: the journal has the charge.
    const again = await holdSettlements(databaseUrl);
    const second = await chat(gw, key, 'answered, then the process dies');
    expect(second.status).toBe(200);
    const secondId = (await second.json()).id;
    gw.proc.kill('SIGKILL');
    await gw.proc.exited;
    expect(await journalText(env)).toContain(secondId);
    await again.query('rollback');
    await again.end();
    const restarted = await start(env);
    await expectBilledOnce(databaseUrl, userId, secondId, 2);
    expect((await api(restarted, 'GET', '/v1/account', { key })).status).toBe(200);
  }, 60_000);

  test('past SETTLEMENT_JOURNAL_MAX_UNSETTLED waiting settlements, calls wait for the database themselves', async () => {
    const { env, databaseUrl } = await postgresEnv('journalbound');
    const gw = await start({ ...env, SETTLEMENT_JOURNAL_MAX_UNSETTLED: '2' });
    const { key } = await createAccount(gw, uniqueEmail('journalbound'), 1);
    const blocker = await holdSettlements(databaseUrl);
    // Two are answered at once, journaled; their settlements wait for the lock.
    for (const n of [1, 2]) {
      const started = performance.now();
      expect((await chat(gw, key, `journaled ${n}`)).status).toBe(200);
      expect(performance.now() - started).toBeLessThan(2_000);
    }
    // The third waits for the database as without a journal: answered only once the lock goes.
    let answered = false;
    const third = chat(gw, key, 'waits for the database').then((res) => {
      answered = true;
      return res;
    });
    await Bun.sleep(1_000);
    expect(answered).toBe(false);
    await blocker.query('rollback');
    await blocker.end();
    expect((await third).status).toBe(200);
    // Everything settles once the database is back.
    let metrics = '';
    for (let i = 0; i < 50 && !/^gateway_llm_unsettled_calls 0$/m.test(metrics); i++) {
      if (i) await Bun.sleep(50);
      metrics = await (await fetch(`${gw.url}/metrics`)).text();
    }
    expect(metrics).toMatch(/^gateway_llm_unsettled_calls 0$/m);
  }, 60_000);

  test('stopped while the database is unreachable: the journal keeps the unsettled call, and the next start bills it once', async () => {
    const { env, databaseUrl } = await postgresEnv('journaldown');
    const gw = await start(env);
    const { userId, key } = await createAccount(gw, uniqueEmail('journaldown'), 1);
    const blocker = await holdSettlements(databaseUrl);
    const res = await chat(gw, key, 'answered, then the database goes away');
    expect(res.status).toBe(200);
    const id = (await res.json()).id;
    // The database goes away: no new connections, every open one (the held-up settlement's, the
    // blocker's) cut. The stop then gives up on the settlement after its retries.
    const name = new URL(databaseUrl).pathname.slice(1);
    const admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    try {
      await admin.query(`alter database "${name}" allow_connections false`);
      await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [name]);
      await blocker.end().catch(() => undefined);
      expect(await gw.stop('SIGTERM')).toBeDefined();
      expect(await journalText(env)).toContain(id);
    } finally {
      await admin.query(`alter database "${name}" allow_connections true`);
      await admin.end();
    }
    const restarted = await start(env);
    await expectBilledOnce(databaseUrl, userId, id, 1);
    expect(restarted.output()).toContain('replayed the settlement journal');
  }, 60_000);

  test('a journal of a worker slot this run does not have is settled by the primary, once', async () => {
    const { env, databaseUrl } = await postgresEnv('journalorphan');
    const gw = await start(env);
    const { userId, key } = await createAccount(gw, uniqueEmail('journalorphan'), 2);
    // A call that is settled: its line is in the file too, as a crash leaves most lines.
    expect((await chat(gw, key, 'settled before the crash')).status).toBe(200);
    // The read waits for the call's settlement.
    const before = (await api(gw, 'GET', '/v1/account', { key })).body.data.balance_usd;
    const [settled] = await queryDatabase<{ id: string }>(databaseUrl, 'select id from tasks where account_id = $1', [
      userId,
    ]);
    await gw.stop();
    // As a run with WORKERS=4 would have left it: slot 3's file, one call settled, one not.
    const taskId = crypto.randomUUID();
    const orphan = SettlementJournal.open(join(env.DATA_DIR, 'journal'), 3);
    orphan.reset();
    await orphan.append(
      '2026-01-02T03:04:03.000Z',
      JSON.stringify([settlementRow({ id: settled?.id as string, account_id: userId, cost: '0.25' })]),
      1,
    );
    await orphan.append(
      '2026-01-02T03:04:05.000Z',
      JSON.stringify([
        settlementRow({
          id: taskId,
          account_id: userId,
          input: { messages: [{ role: 'user', content: 'left by slot 3' }] },
          output: { id: 'chatcmpl-orphan' },
          cost: '0.5',
          created_at: '2026-01-02T03:04:04.000Z',
        }),
      ]),
      1,
    );
    orphan.close(false);
    for (let run = 0; run < 2; run++) {
      const restarted = await start(env);
      const account = await api(restarted, 'GET', '/v1/account', { key });
      expect(account.body.data.balance_usd).toBeCloseTo(before - 0.5, 9);
      await restarted.stop();
      // The settled call was found by the lookup and left out; only the other was settled.
      if (run === 0) expect(restarted.output()).toContain('"calls":1,"already_settled":1');
    }
    const [row] = await queryDatabase<{ cost_usd: string; finished_at: Date }>(
      databaseUrl,
      'select cost_usd, finished_at from tasks where id = $1',
      [taskId],
    );
    expect(Number(row?.cost_usd)).toBe(0.5);
    expect(row?.finished_at.toISOString()).toBe('2026-01-02T03:04:05.000Z');
  }, 60_000);

  test('a second gateway on the same DATA_DIR is refused while the first runs', async () => {
    const { env } = await postgresEnv('journallock');
    await start(env);
    const second = await startGateway({ ...env }, { waitReady: false });
    running.push(second);
    expect(await second.proc.exited).toBe(1);
    expect(second.output()).toContain('is in use by process');
  }, 60_000);
});

interface TaskView {
  task_id: string;
  cost: number;
  output?: { id?: string } | null;
}

/**
 * Holds every settlement up until rolled back: settlements insert into tasks, and a SHARE lock
 * on it makes them wait (holds and reads do not need it).
 */
async function holdSettlements(databaseUrl: string): Promise<pg.Client> {
  const blocker = new pg.Client({ connectionString: databaseUrl });
  blocker.on('error', () => undefined); // a test may cut it on purpose
  await blocker.connect();
  await blocker.query('begin');
  await blocker.query('lock table tasks in share mode');
  return blocker;
}

/** The largest size each of slot 0's two segment files had, sampled every 20 ms until stopped. */
function watchJournalSizes(dataDir: string) {
  const max = [0, 0];
  const paths = ['settlements-0.log', 'settlements-0.1.log'].map((f) => join(dataDir, 'journal', f));
  const timer = setInterval(() => {
    paths.forEach((path, i) => {
      stat(path)
        .then((s) => {
          max[i] = Math.max(max[i] ?? 0, s.size);
        })
        .catch(() => undefined);
    });
  }, 20);
  return { max, stop: () => clearInterval(timer) };
}

/** Slot 0's journal file as text. */
const journalText = (env: { DATA_DIR: string }) => readFile(join(env.DATA_DIR, 'journal', 'settlements-0.log'), 'utf8');

/**
 * After a restart: the account has `calls` LLM task rows and as many charges, its balance equals
 * its ledger, and the call the client saw as `clientId` is recorded exactly once.
 */
async function expectBilledOnce(databaseUrl: string, userId: number, clientId: string, calls: number) {
  const m = await moneyOf(databaseUrl, userId);
  expect([m.tasks, m.charges]).toEqual([calls, calls]);
  expect(m.balance).toBeCloseTo(m.ledger, 12);
  const [recorded] = await queryDatabase<{ n: string }>(
    databaseUrl,
    "select count(*)::text as n from tasks where output->>'id' = $1",
    [clientId],
  );
  expect(recorded?.n).toBe('1');
}

/** One account's LLM task rows, charges, balance and ledger sum, from the database. */
async function moneyOf(databaseUrl: string, userId: number) {
  const [row] = await queryDatabase<{ tasks: string; charges: string; balance: string; ledger: string }>(
    databaseUrl,
    `select (select count(*) from tasks where account_id = $1 and category = 'llm') as tasks,
            (select count(*) from ledger_entries where account_id = $1 and kind = 'charge') as charges,
            (select balance_usd from accounts where id = $1) as balance,
            (select sum(amount_usd) from ledger_entries where account_id = $1) as ledger`,
    [userId],
  );
  return {
    tasks: Number(row?.tasks),
    charges: Number(row?.charges),
    balance: Number(row?.balance),
    ledger: Number(row?.ledger),
  };
}

/** Every LLM task record of the account, through the API, page by page. */
async function listLlmTasks(gw: GatewayProcess, key: string): Promise<TaskView[]> {
  const all: TaskView[] = [];
  for (let page = 1; ; page++) {
    const res = await api(gw, 'GET', `/v1/tasks?category=llm&page_size=100&page=${page}`, { key });
    if (res.status !== 200) throw new Error(`list tasks: ${res.status} ${JSON.stringify(res.body)}`);
    all.push(...(res.body.data as TaskView[]));
    if (!res.body.pagination.has_next) return all;
  }
}

/**
 * Media task benchmark: task creation rate and webhook delivery rate. Prints Markdown (figures,
 * not a test).
 *
 *   bun run bench/tasks.ts [--seconds 10] [--deliveries 20000] [--only create,webhooks]
 *
 * Starts, as separate processes on 127.0.0.1, a webhook receiver (bench/lib/webhook-receiver.ts,
 * answers 200 and counts) and gateways in Postgres+Redis mode, each on a fresh database, with
 * ALLOW_PRIVATE_URLS=true so callbacks may go to the receiver:
 *
 *  1. Task creation: wrk POSTs /v1/tasks (sandbox/image, 64×64, delay_ms 0, callback_url to the
 *     receiver) at 16 and 64 connections, after the same with `dry_run: true` (validation and
 *     pricing only) as a reference; 2 s warm-up per row. The tasks run on the gateway meanwhile,
 *     as they would in production. Afterwards, in one snapshot: the account's balance equals the
 *     sum of its ledger rows, and the task rows match the 200 answers wrk counted.
 *  2. Webhook delivery, isolated from task execution: on a second gateway a handful of tasks are
 *     created and finished, then N pending rows are inserted into webhook_deliveries directly
 *     (copies of those tasks' deliveries) and the time until the receiver has counted all N is
 *     measured; callback_attempts must gain N rows.
 *
 * Every process it starts is stopped and both databases dropped on exit, also on error or Ctrl-C;
 * every wait is bounded.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Subprocess } from 'bun';
import pg from 'pg';
import { api, createAccount, uniqueEmail } from '../tests/helpers/api.ts';
import { MODES, startGateway, type GatewayProcess } from '../tests/helpers/gateway-process.ts';
import { dropTestDatabases } from '../tests/helpers/services.ts';
import { stopProcesses } from './lib/stop-processes.ts';
import { spawnPortPrinter } from './lib/spawn-port-printer.ts';
import { requireWrk, table } from './lib/wrk.ts';
import { runWrkPost, writePostScript, type PostLoadResult } from './lib/wrk-post.ts';
import { numberArg } from './lib/cli-args.ts';

const SECONDS = numberArg('--seconds', 10);
const DELIVERIES = numberArg('--deliveries', 20_000);
const onlyAt = process.argv.indexOf('--only');
const SECTIONS = new Set(onlyAt >= 0 ? (process.argv[onlyAt + 1] ?? '').split(',') : ['create', 'webhooks']);
const CONNECTIONS = [16, 64];
const WARMUP_SECONDS = 2;
const HOST = '127.0.0.1';

const TARGET_CREATES_PER_S = 3000;
const TARGET_CREATE_P99_MS = 25;
const TARGET_DELIVERIES_PER_S = 2000;

requireWrk();
const log = (line: string) => process.stderr.write(`${line}\n`);
const round = (n: number, d = 2) => (Number.isFinite(n) ? n.toFixed(d) : 'n/a');
const verdict = (ok: boolean) => (ok ? 'met' : 'not met');

// ---------------------------------------------------------------- process bookkeeping and cleanup

const workDir = await mkdtemp(join(tmpdir(), 'bench-tasks-'));
let receiver: Subprocess<'ignore', 'pipe', 'pipe'> | undefined;
const gateways = new Set<GatewayProcess>();
const databases: string[] = [];
const clients: pg.Client[] = [];
let cleaned = false;

async function cleanup(): Promise<void> {
  if (cleaned) return;
  cleaned = true;
  // never hang on exit: anything still running after 5 s is killed
  await stopProcesses(gateways, [receiver], 5000);
  await Promise.allSettled(clients.map((c) => c.end()));
  await dropTestDatabases(databases);
  await rm(workDir, { recursive: true, force: true });
}

for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    log(`\n${sig}: cleaning up`);
    void cleanup().finally(() => process.exit(130));
  });
}

// ---------------------------------------------------------------- processes

async function startReceiver(): Promise<number> {
  const started = await spawnPortPrinter(resolve(import.meta.dir, 'lib/webhook-receiver.ts'), 'webhook receiver');
  receiver = started.proc;
  return started.port;
}

async function receivedCount(port: number): Promise<number> {
  const res = await fetch(`http://${HOST}:${port}/count`, { signal: AbortSignal.timeout(5000) });
  return ((await res.json()) as { count: number }).count;
}

/** A fresh Postgres+Redis gateway with its own database, files in the work dir, and a pg client on that database. */
async function startBenchGateway(label: string): Promise<{ gw: GatewayProcess; db: pg.Client }> {
  const modeEnv = await MODES[0]!.env(label);
  databases.push(modeEnv.DATABASE_URL!);
  const dataDir = join(workDir, label);
  await mkdir(dataDir, { recursive: true });
  const gw = await startGateway({
    ...modeEnv,
    DATA_DIR: dataDir, // task outputs (PNGs) land here, not in the repository's ./data
    ALLOW_PRIVATE_URLS: 'true',
    RATE_LIMIT_PER_MINUTE: '100000000',
    LOG_LEVEL: 'warn',
  });
  gateways.add(gw);
  const db = new pg.Client({ connectionString: modeEnv.DATABASE_URL });
  clients.push(db);
  await db.connect();
  return { gw, db };
}

async function stopGateway(gw: GatewayProcess): Promise<void> {
  const killer = setTimeout(() => gw.proc.kill('SIGKILL'), 15_000);
  await gw.stop();
  clearTimeout(killer);
  gateways.delete(gw);
}

async function status(pid: number): Promise<{ rssMb: number; hwmMb: number }> {
  const text = await Bun.file(`/proc/${pid}/status`).text();
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(text)?.[1] ?? Number.NaN);
  return { rssMb: Math.round(kb('VmRSS') / 102.4) / 10, hwmMb: Math.round(kb('VmHWM') / 102.4) / 10 };
}

/** Polls `done` every `everyMs` until it is true or `timeoutMs` passes; returns whether it became true. */
async function waitFor(done: () => Promise<boolean>, timeoutMs: number, everyMs = 50): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await done()) return true;
    await Bun.sleep(everyMs);
  }
  return done();
}

const taskBody = (receiverPort: number, dryRun: boolean) =>
  JSON.stringify({
    model: 'sandbox/image',
    input: { prompt: 'bench', width: 64, height: 64, delay_ms: 0 },
    callback_url: `http://${HOST}:${receiverPort}/hook`,
    ...(dryRun ? { dry_run: true } : {}),
  });

// ---------------------------------------------------------------- 1. task creation

async function creationBench(receiverPort: number, targets: string[]): Promise<void> {
  const { gw, db } = await startBenchGateway('bench_tasks_create');
  try {
    const { userId, key } = await createAccount(gw, uniqueEmail('bench-tasks'), 1_000_000);
    const bearer = { authorization: `Bearer ${key}` };
    const url = `${gw.url}/v1/tasks`;

    const probe = await api(gw, 'POST', '/v1/tasks', { key, rawBody: taskBody(receiverPort, false) });
    if (probe.status !== 200 || !probe.body?.data?.task_id)
      throw new Error(`POST /v1/tasks: ${probe.status} ${JSON.stringify(probe.body)}`);
    const dry = await api(gw, 'POST', '/v1/tasks', { key, rawBody: taskBody(receiverPort, true) });
    if (dry.status !== 200 || typeof dry.body?.data?.cost !== 'number')
      throw new Error(`dry run: ${dry.status} ${JSON.stringify(dry.body)}`);
    log(`probe task ${probe.body.data.task_id}; dry-run cost ${dry.body.data.cost} USD`);
    let createdByUs = 1; // the probe
    let inFlightAtStops = 0; // requests wrk may have sent but not counted when a run ended

    const scripts = {
      create: await writePostScript(workDir, 'create', taskBody(receiverPort, false), bearer),
      dry: await writePostScript(workDir, 'dry-run', taskBody(receiverPort, true), bearer),
    };
    const rows: Array<Record<string, string | number>> = [];
    const createResults: PostLoadResult[] = [];
    // Dry runs first, on a gateway with no task backlog; then the real creates, whose tasks run
    // (and call back) on the same gateway while wrk keeps creating more.
    for (const [name, script, creates] of [
      ['dry_run: true (reference)', scripts.dry, false],
      ['create + charge', scripts.create, true],
    ] as const) {
      for (const connections of CONNECTIONS) {
        const warm = await runWrkPost({ url, connections, seconds: WARMUP_SECONDS, script });
        const r = await runWrkPost({ url, connections, seconds: SECONDS, script });
        if (creates) {
          createdByUs += warm.ok + r.ok;
          inFlightAtStops += 2 * connections;
          createResults.push(r);
        }
        const st = await status(gw.proc.pid);
        const backlog = Number(
          (await db.query(`select count(*) as n from tasks where status = 'processing'`)).rows[0].n,
        );
        rows.push({
          request: name,
          connections,
          'tasks/s': Math.round(r.okPerSec),
          'p50 ms': round(r.p50Ms),
          'p90 ms': round(r.p90Ms),
          'p99 ms': round(r.p99Ms),
          'non-2xx': r.non2xx,
          'socket errors': r.socketErrors,
          'tasks still processing': creates ? backlog : '—',
          'RSS MB': st.rssMb,
          'peak RSS MB': st.hwmMb,
          [`≥ ${TARGET_CREATES_PER_S}/s, p99 ≤ ${TARGET_CREATE_P99_MS} ms`]: creates
            ? verdict(r.okPerSec >= TARGET_CREATES_PER_S && r.p99Ms <= TARGET_CREATE_P99_MS && r.non2xx === 0)
            : '—',
        });
        log(
          `${name} c=${connections}: ${Math.round(r.okPerSec)}/s p50 ${round(r.p50Ms)} p99 ${round(r.p99Ms)} ms non-2xx ${r.non2xx} errors ${r.socketErrors} backlog ${backlog} RSS ${st.rssMb} MB`,
        );
      }
    }

    // One statement, so one snapshot: tasks finishing meanwhile refund in the same transaction
    // that writes their ledger row, so balance = Σ ledger holds at every instant.
    const check = async () =>
      (
        await db.query(
          `select a.balance_usd::text as balance,
                  (select coalesce(sum(amount_usd), 0)::text from ledger_entries l where l.account_id = a.id) as ledger_sum,
                  (select count(*) from ledger_entries l where l.account_id = a.id)::int as ledger_rows,
                  (select count(*) from tasks t where t.account_id = a.id)::int as tasks,
                  (select count(*) from tasks t where t.account_id = a.id and t.status = 'completed')::int as completed,
                  (select count(*) from tasks t where t.account_id = a.id and t.status = 'failed')::int as failed,
                  (select count(*) from callback_attempts c join tasks t on t.id = c.task_id where t.account_id = a.id)::int as callbacks
           from accounts a where a.id = $1`,
          [userId],
        )
      ).rows[0] as {
        balance: string;
        ledger_sum: string;
        ledger_rows: number;
        tasks: number;
        completed: number;
        failed: number;
        callbacks: number;
      };
    const c = await check();
    const received = await receivedCount(receiverPort);
    const balanceOk = c.balance === c.ledger_sum;
    const extra = c.tasks - createdByUs;
    const countOk = extra >= 0 && extra <= inFlightAtStops;
    const peak = await status(gw.proc.pid);

    console.log(
      `### 1. Task creation — POST /v1/tasks, sandbox/image 64×64 with callback_url (wrk, ${SECONDS} s per row after ${WARMUP_SECONDS} s warm-up; Postgres+Redis)\n`,
    );
    console.log(table(rows));
    console.log('');
    console.log(
      `Consistency after the runs (one snapshot): balance ${c.balance} USD ${balanceOk ? '=' : '≠'} Σ ledger ${c.ledger_sum} USD over ${c.ledger_rows} rows — ${balanceOk ? 'ok' : 'MISMATCH'}; ` +
        `task rows ${c.tasks} vs 200 answers counted by wrk (warm-ups included) + 1 probe = ${createdByUs}: ${extra >= 0 ? '+' : ''}${extra} ` +
        `(requests in flight when wrk stopped, at most ${inFlightAtStops}) — ${countOk ? 'ok' : 'MISMATCH'}. ` +
        `Meanwhile ${c.completed} tasks completed, ${c.failed} failed, ${c.callbacks} callback attempts logged, ${received} webhooks received.\n`,
    );
    const all = createResults.every(
      (r) => r.okPerSec >= TARGET_CREATES_PER_S && r.p99Ms <= TARGET_CREATE_P99_MS && r.non2xx === 0,
    );
    targets.push(
      `task creation ≥ ${TARGET_CREATES_PER_S}/s with p99 ≤ ${TARGET_CREATE_P99_MS} ms — ${verdict(all)} (` +
        createResults
          .map((r) => `${r.connections} conn: ${Math.round(r.okPerSec)}/s, p99 ${round(r.p99Ms)} ms`)
          .join('; ') +
        `; peak RSS ${peak.hwmMb} MB)`,
    );
    targets.push(
      `balance = Σ ledger — ${balanceOk ? 'ok' : 'not ok'}; task rows = wrk 200s (± in flight) — ${countOk ? 'ok' : 'not ok'}`,
    );
  } catch (err) {
    log(`gateway output:\n${gw.output().slice(-4000)}`);
    throw err;
  } finally {
    await stopGateway(gw); // SIGTERM hands the remaining backlog back; its CPU must not skew section 2
  }
}

// ---------------------------------------------------------------- 2. webhook delivery

async function deliveryBench(receiverPort: number, targets: string[]): Promise<void> {
  const { gw, db } = await startBenchGateway('bench_tasks_hooks');
  try {
    const { key } = await createAccount(gw, uniqueEmail('bench-hooks'), 1000);
    const seedTasks = 8;
    const before = await receivedCount(receiverPort);
    const ids: string[] = [];
    for (let i = 0; i < seedTasks; i++) {
      const res = await api(gw, 'POST', '/v1/tasks', { key, rawBody: taskBody(receiverPort, false) });
      if (res.status !== 200) throw new Error(`seed task: ${res.status} ${JSON.stringify(res.body)}`);
      ids.push(res.body.data.task_id);
    }
    const seeded = await waitFor(async () => {
      const r = await db.query(
        `select (select count(*) from tasks where id = any($1) and status <> 'processing')::int as finished,
                (select count(*) from webhook_deliveries where task_id = any($1) and state = 'done')::int as delivered`,
        [ids],
      );
      return (
        r.rows[0].finished === seedTasks &&
        r.rows[0].delivered === seedTasks &&
        (await receivedCount(receiverPort)) - before >= seedTasks
      );
    }, 30_000);
    if (!seeded) throw new Error('the seed tasks did not finish and call back within 30 s');

    await Bun.sleep(500); // let the deliverer go idle (it polls every 200 ms)
    const attempts0 = Number((await db.query('select count(*) as n from callback_attempts')).rows[0].n);
    const received0 = await receivedCount(receiverPort);
    const idle = await status(gw.proc.pid);

    // N pending deliveries, copies of the seed tasks' (done) deliveries, due now.
    const insertStart = performance.now();
    await db.query(
      `with src as (select task_id, payload, (row_number() over (order by id) - 1)::int as i, count(*) over ()::int as n
                    from webhook_deliveries where task_id = any($2) and state = 'done')
       insert into webhook_deliveries (task_id, attempt_no, trigger, due_at, state, payload)
       select s.task_id, 1, 'auto', now(), 'pending', s.payload from generate_series(0, $1::int - 1) g join src s on s.i = g % s.n`,
      [DELIVERIES, ids],
    );
    const t0 = performance.now();
    const insertMs = t0 - insertStart;

    let rssPeak = idle.rssMb;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        rssPeak = Math.max(rssPeak, (await status(gw.proc.pid).catch(() => ({ rssMb: 0 }))).rssMb);
        await Bun.sleep(100);
      }
    })();
    let firstMs = Number.NaN;
    let got = 0;
    const timeoutMs = Math.max(60_000, (DELIVERIES / 200) * 1000); // bounded: gives up below 200/s
    const allReceived = await waitFor(
      async () => {
        got = (await receivedCount(receiverPort)) - received0;
        if (got > 0 && Number.isNaN(firstMs)) firstMs = performance.now() - t0;
        return got >= DELIVERIES;
      },
      timeoutMs,
      10,
    );
    const elapsedMs = performance.now() - t0;
    const logged = await waitFor(
      async () =>
        Number((await db.query('select count(*) as n from callback_attempts')).rows[0].n) - attempts0 >= DELIVERIES,
      15_000,
      20,
    );
    const loggedMs = performance.now() - t0;
    sampling = false;
    await sampler;
    const attemptsGained =
      Number((await db.query('select count(*) as n from callback_attempts')).rows[0].n) - attempts0;
    const pendingLeft = Number(
      (await db.query(`select count(*) as n from webhook_deliveries where state = 'pending'`)).rows[0].n,
    );
    const st = await status(gw.proc.pid);
    const rate = (got / elapsedMs) * 1000;
    const met = allReceived && rate >= TARGET_DELIVERIES_PER_S;
    const row = {
      deliveries: DELIVERIES,
      received: got,
      'insert ms': Math.round(insertMs),
      'first received ms': round(firstMs, 0),
      'all received s': round(elapsedMs / 1000, 2),
      'deliveries/s': Math.round(rate),
      'callback_attempts gained': attemptsGained,
      'all logged s': logged ? round(loggedMs / 1000, 2) : 'timeout',
      'pending left': pendingLeft,
      'idle RSS MB': idle.rssMb,
      'peak RSS during MB': rssPeak,
      'peak RSS (VmHWM) MB': st.hwmMb,
      [`≥ ${TARGET_DELIVERIES_PER_S}/s`]: verdict(met),
    };
    log(`webhooks: ${JSON.stringify(row)}`);
    console.log(
      `### 2. Webhook delivery — ${DELIVERIES} pending rows inserted into webhook_deliveries, until the receiver counted them all (fresh Postgres+Redis gateway, no task running)\n`,
    );
    console.log(table([row]));
    console.log('');
    targets.push(
      `webhook delivery ≥ ${TARGET_DELIVERIES_PER_S}/s — ${verdict(met)} (${Math.round(rate)}/s, ${got}/${DELIVERIES} received; ` +
        `callback_attempts +${attemptsGained} — ${attemptsGained === DELIVERIES ? 'ok' : 'not ok'}; peak RSS ${st.hwmMb} MB)`,
    );
  } catch (err) {
    log(`gateway output:\n${gw.output().slice(-4000)}`);
    throw err;
  } finally {
    await stopGateway(gw);
  }
}

// ---------------------------------------------------------------- main

try {
  const receiverPort = await startReceiver();
  const targets: string[] = [];
  if (SECTIONS.has('create')) await creationBench(receiverPort, targets);
  if (SECTIONS.has('webhooks')) await deliveryBench(receiverPort, targets);
  console.log('### Targets (2-core machine)\n');
  for (const t of targets) console.log(`- ${t}`);
} finally {
  await cleanup();
}

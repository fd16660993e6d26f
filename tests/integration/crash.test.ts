import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'bun:test';
import { api, createAccount, uniqueEmail } from '../helpers/api.ts';
import { startGateway, type GatewayProcess } from '../helpers/gateway-process.ts';
import { REDIS_URL, createTestDatabase, queryDatabase } from '../helpers/services.ts';
import { WebhookReceiver, plans, reply, type Received } from '../helpers/webhook-receiver.ts';

/**
 * Two instances on one Postgres and Redis; instance A is SIGKILLed while tasks run, deliveries
 * are in flight and retries are pending. Instance B must finish every task, make every callback
 * (at least once) and every due retry, and the money must still add up. A then restarts cleanly.
 */

const TASKS = 30;
const path = (i: number) => (i % 3 === 0 ? '/flaky' : i % 3 === 1 ? '/slow' : '/ok');
const shouldFail = (i: number) => i % 7 === 3;

describe('crash: SIGKILL of one of two instances (postgres+redis)', () => {
  const running: GatewayProcess[] = [];
  const rx = WebhookReceiver.start();
  afterAll(async () => {
    await Promise.all(running.map((gw) => gw.stop('SIGKILL')));
    rx.stop();
  });

  test('every task finishes on the survivor, every callback and due retry arrives, balances equal the ledger; A restarts', async () => {
    const databaseUrl = await createTestDatabase('crash');
    const env = {
      DATABASE_URL: databaseUrl,
      REDIS_URL,
      REDIS_KEY_PREFIX: `${new URL(databaseUrl).pathname.slice(1)}:`,
      // Shared by both instances, so a file saved by one is served by the other.
      DATA_DIR: await mkdtemp(join(tmpdir(), 'gw-crash-')),
      ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_RETRY_DELAYS: '1,2,3,4',
    };
    let a = await startGateway({ ...env, INSTANCE_ID: 'crash-a' });
    running.push(a);
    const b = await startGateway({ ...env, INSTANCE_ID: 'crash-b' });
    running.push(b);

    const accounts = [
      await createAccount(a, uniqueEmail('crash-1'), 10),
      await createAccount(a, uniqueEmail('crash-2'), 10),
    ];
    const urls = {
      '/flaky': rx.url('/flaky', plans.failFirst(1)),
      // Answers after 600 ms, so deliveries are in flight when A dies.
      '/slow': rx.url('/slow', () => reply.hang(600)),
      '/ok': rx.url('/ok'),
    } as Record<string, string>;
    const specs = Array.from({ length: TASKS }, (_, i) => {
      const model = i % 5 === 4 ? 'sandbox/speech' : i % 10 === 9 ? 'sandbox/video' : 'sandbox/image';
      const delay_ms = 2000 + ((i * 137) % 2001);
      const input: Record<string, unknown> =
        model === 'sandbox/speech' ? { text: `crash ${i}`, delay_ms } : { prompt: `crash ${i}`, delay_ms };
      if (shouldFail(i)) input.fail = true;
      return { i, key: (accounts[i % 2] as { key: string }).key, body: { model, input, callback_url: urls[path(i)] } };
    });
    const created = await Promise.all(
      specs.map(async (s) => {
        const res = await api(a, 'POST', '/v1/tasks', { key: s.key, body: s.body });
        expect(res.status).toBe(200);
        return { ...s, id: res.body.data.task_id as string };
      }),
    );
    const createdAt = Date.now();

    // Kill A mid-flight: the fastest tasks are done (their retries pending), the rest are running.
    await Bun.sleep(3_000);
    const before = await queryDatabase<{
      finished: string;
      a_tasks: string;
      a_deliveries: string;
      pending_retries: string;
    }>(
      databaseUrl,
      `select (select count(*) from tasks where status <> 'processing' and category <> 'llm') as finished,
              (select count(*) from tasks where lease_owner like 'crash-a-%') as a_tasks,
              (select count(*) from webhook_deliveries where lease_owner like 'crash-a-%' and state = 'pending') as a_deliveries,
              (select count(*) from webhook_deliveries where state = 'pending' and attempt_no > 1) as pending_retries`,
    );
    a.proc.kill('SIGKILL');
    expect(await a.proc.exited).not.toBe(0);
    const killedAt = Date.now();
    const receivedBeforeKill = rx.requests.length;
    console.log(
      `crash: killed A ${killedAt - createdAt} ms after creating ${TASKS} tasks; at the kill: ${JSON.stringify(before[0])}, ${receivedBeforeKill} callbacks received`,
    );
    // The kill really was mid-flight: some tasks finished, some not yet.
    expect(Number(before[0]?.finished)).toBeGreaterThan(0);
    expect(Number(before[0]?.finished)).toBeLessThan(TASKS);

    // Every task reaches its final state, as seen through B.
    const deadline = killedAt + 40_000;
    const views = new Map<string, any>();
    for (const t of created) {
      for (;;) {
        const res = await api(b, 'GET', `/v1/tasks/${t.id}`, { key: t.key });
        expect(res.status).toBe(200);
        const task = res.body.data;
        const ok2xx = (task.callback_result ?? []).some((e: any) => e.status >= 200 && e.status < 300);
        if (task.status !== 'processing' && ok2xx) {
          views.set(t.id, task);
          break;
        }
        if (Date.now() > deadline)
          throw new Error(
            `task ${t.i} (${t.id}) not finished and delivered 40 s after the kill: ${JSON.stringify(task)}`,
          );
        await Bun.sleep(200);
      }
    }
    const settledAt = Date.now();
    console.log(`crash: every task finished and delivered ${settledAt - killedAt} ms after the kill`);

    for (const t of created) {
      const task = views.get(t.id);
      expect(task.status).toBe(shouldFail(t.i) ? 'failed' : 'completed');
      // Deduplicated on task_id, every callback arrived, with the right payload.
      const hits = rx.received({ taskId: t.id });
      expect(hits.length).toBeGreaterThanOrEqual(1);
      for (const hit of hits) {
        expect(hit.path).toBe(path(t.i));
        expect(JSON.parse(hit.body)).toEqual(
          shouldFail(t.i)
            ? { task_id: t.id, status: 'failed', error_message: 'sandbox: simulated failure' }
            : { task_id: t.id, status: 'completed', data: task.output },
        );
      }
      // At least one arrival was answered 2xx (for /flaky that is a retry: the first call got 500).
      expect(
        hits.some(
          (h: Received) => h.answered.kind === 'hang' || (h.answered.kind === 'status' && h.answered.status === 200),
        ),
      ).toBe(true);
      if (path(t.i) === '/flaky') {
        expect(hits.length).toBeGreaterThanOrEqual(2);
        // The first arrival got the 500. Its log entry is there unless the instance that sent it was
        // killed between the answer and the write: then the receiver saw more arrivals than were logged.
        expect(hits[0]?.answered).toMatchObject({ kind: 'status', status: 500 });
        if (task.callback_result[0]?.status !== 500) expect(hits.length).toBeGreaterThan(task.callback_result.length);
      }
      expect(task.callback_result.length).toBeLessThanOrEqual(10);
    }
    const dupes = created.filter((t) => rx.received({ taskId: t.id }).length > (path(t.i) === '/flaky' ? 2 : 1)).length;
    console.log(`crash: ${rx.requests.length} callbacks for ${TASKS} tasks; ${dupes} task(s) got a duplicate delivery`);

    // Nothing left behind: no task processing, no delivery pending.
    const left = await queryDatabase<{ processing: string; pending: string }>(
      databaseUrl,
      `select (select count(*) from tasks where status = 'processing') as processing,
              (select count(*) from webhook_deliveries where state = 'pending') as pending`,
    );
    expect(left[0]).toEqual({ processing: '0', pending: '0' });

    // Money: every balance equals the sum of its ledger; one charge per task, one full refund per failed task.
    const balances = await queryDatabase<{ id: number; balance: string; ledger: string; equal: boolean }>(
      databaseUrl,
      `select a.id, a.balance_usd::text as balance, coalesce(sum(l.amount_usd), 0)::text as ledger,
              a.balance_usd = coalesce(sum(l.amount_usd), 0) as equal
         from accounts a left join ledger_entries l on l.account_id = a.id group by a.id order by a.id`,
    );
    expect(balances.length).toBeGreaterThanOrEqual(2);
    for (const row of balances)
      expect({ id: row.id, balance: row.balance, equal: row.equal }).toEqual({
        id: row.id,
        balance: row.ledger,
        equal: true,
      });
    const perTask = await queryDatabase<{
      task_id: string;
      charges: string;
      refunds: string;
      charged: string;
      refunded: string;
      cost: string;
    }>(
      databaseUrl,
      `select t.id as task_id, t.cost_usd::text as cost,
              (count(*) filter (where l.kind = 'charge'))::text as charges,
              (count(*) filter (where l.kind = 'refund'))::text as refunds,
              coalesce(-sum(l.amount_usd) filter (where l.kind = 'charge'), 0)::text as charged,
              coalesce(sum(l.amount_usd) filter (where l.kind = 'refund'), 0)::text as refunded
         from tasks t left join ledger_entries l on l.task_id = t.id group by t.id`,
    );
    expect(perTask).toHaveLength(TASKS);
    for (const t of created) {
      const row = perTask.find((r) => r.task_id === t.id);
      expect(row?.charges).toBe('1');
      expect(row?.refunds).toBe(shouldFail(t.i) ? '1' : '0');
      if (shouldFail(t.i)) expect(Number(row?.refunded)).toBe(Number(row?.charged));
      expect(Number(row?.cost)).toBeCloseTo(shouldFail(t.i) ? 0 : Number(row?.charged), 10);
      expect(views.get(t.id).cost).toBeCloseTo(Number(row?.cost), 10);
    }
    for (const acct of accounts) {
      const view = await api(b, 'GET', '/v1/account', { key: acct.key });
      const row = balances.find((r) => r.id === acct.userId);
      expect(view.body.data.balance_usd).toBeCloseTo(Number(row?.balance), 10);
    }

    // A restarts on the same database (and port): it starts, is ready, and serves the tasks.
    a = await startGateway({ ...env, INSTANCE_ID: 'crash-a', PORT: String(a.port) });
    running.push(a);
    expect(a.firstKey()).toBeUndefined();
    expect((await fetch(`${a.url}/readyz`)).status).toBe(200);
    for (const acct of accounts) {
      const list = await api(a, 'GET', '/v1/tasks?page_size=100', { key: acct.key });
      expect(list.status).toBe(200);
      expect(list.body.pagination.total).toBe(TASKS / 2);
      for (const task of list.body.data) expect(task.status).toBe(views.get(task.task_id)?.status);
    }
    const sample = created.find(
      (t) => !shouldFail(t.i) && views.get(t.id).output.image_url,
    ) as (typeof created)[number];
    const one = await api(a, 'GET', `/v1/tasks/${sample.id}`, { key: sample.key });
    expect(one.body.data).toMatchObject({
      task_id: sample.id,
      status: 'completed',
      output: views.get(sample.id).output,
    });
    const file = await fetch(views.get(sample.id).output.image_url);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toStartWith('image/png');
    await file.arrayBuffer();

    // …and runs new work with its callback.
    const fresh = await api(a, 'POST', '/v1/tasks', {
      key: (accounts[0] as { key: string }).key,
      body: {
        model: 'sandbox/image',
        input: { prompt: 'after restart', delay_ms: 100 },
        callback_url: rx.url('/after-restart'),
      },
    });
    expect(fresh.status).toBe(200);
    const [hit] = await rx.waitForCount({ path: '/after-restart' }, 1, 10_000);
    expect((hit as Received).json).toMatchObject({ task_id: fresh.body.data.task_id, status: 'completed' });
    console.log(`crash: total ${Date.now() - createdAt} ms`);
  }, 120_000);
});

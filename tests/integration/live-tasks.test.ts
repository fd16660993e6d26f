import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Webhook } from 'standardwebhooks';
import { api, createAccount, uniqueEmail } from '../helpers/api.ts';
import { MODES, startGateway, type GatewayProcess } from '../helpers/gateway-process.ts';
import { queryDatabase } from '../helpers/services.ts';
import { openTaskEvents } from '../helpers/task-events.ts';
import { WebhookReceiver, plans, standardSecretOf, verifySignature } from '../helpers/webhook-receiver.ts';

/**
 * Live tasks (docs/api-contract.md "Cancelling a task" and "Live task status", docs/webhooks.md
 * "Signing"): cancel with its exact refund, also while the task races to completion; the
 * `cancelled` webhook; Standard Webhooks headers verified by the `standardwebhooks` library, with
 * a `webhook-id` kept across retries; the event stream of one task.
 */

const ENV = {
  ALLOW_PRIVATE_URLS: 'true',
  WEBHOOK_RETRY_DELAYS: '1,1',
  TASK_EVENTS_HEARTBEAT_MS: '200',
  TASK_EVENTS_MAX_STREAMS_PER_ACCOUNT: '4',
};
const IMAGE_PRICE = 0.01;

async function createTask(gw: GatewayProcess, key: string, body: Record<string, unknown>): Promise<string> {
  const res = await api(gw, 'POST', '/v1/tasks', { key, body });
  if (res.status !== 200) throw new Error(`task creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.task_id as string;
}

async function waitTask(gw: GatewayProcess, key: string, id: string, until: (t: any) => boolean, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await api(gw, 'GET', `/v1/tasks/${id}`, { key });
    if (res.status === 200 && until(res.body.data)) return res.body.data;
    if (Date.now() > deadline) throw new Error(`task ${id} stuck: ${JSON.stringify(res.body)}`);
    await Bun.sleep(50);
  }
}

const balance = async (gw: GatewayProcess, key: string): Promise<number> =>
  (await api(gw, 'GET', '/v1/account', { key })).body.data.balance_usd;
const units = (usd: number | string) => Math.round(Number(usd) * 1e10);

for (const mode of MODES) {
  describe(`live tasks [${mode.name}]`, () => {
    let gw: GatewayProcess;
    let rx: WebhookReceiver;
    let databaseUrl: string | undefined;

    beforeAll(async () => {
      rx = WebhookReceiver.start();
      const env = await mode.env('live');
      databaseUrl = env.DATABASE_URL;
      gw = await startGateway({ ...env, ...ENV, RATE_LIMIT_PER_MINUTE: '100000' });
    });
    afterAll(async () => {
      rx?.stop();
      await gw?.stop();
    });

    test('cancel: cancelled, refunded in full, webhook "cancelled", listed by status; then 409; others 404', async () => {
      const { key } = await createAccount(gw, uniqueEmail('cancel'), 1);
      const { key: otherKey } = await createAccount(gw, uniqueEmail('cancel-other'), 1);
      const url = rx.url('/cancelled');
      const id = await createTask(gw, key, {
        model: 'sandbox/image',
        input: { prompt: 'slow fox', delay_ms: 20_000, max_sequential_images: 3 },
        callback_url: url,
      });
      expect(await balance(gw, key)).toBeCloseTo(1 - 3 * IMAGE_PRICE, 10);

      expect((await api(gw, 'POST', `/v1/tasks/${id}/cancel`, { key: otherKey })).status).toBe(404);
      expect((await api(gw, 'POST', '/v1/tasks/no-such-task/cancel', { key })).status).toBe(404);
      expect((await api(gw, 'POST', `/v1/tasks/${id}/cancel`)).status).toBe(401);

      const res = await api(gw, 'POST', `/v1/tasks/${id}/cancel`, { key });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ task_id: id, status: 'cancelled', cost: 0, output: null });
      // The sandbox has nothing running upstream to leave behind: no warning.
      expect(res.headers.get('x-gateway-warnings')).toBeNull();
      expect(await balance(gw, key)).toBe(1);

      const again = await api(gw, 'POST', `/v1/tasks/${id}/cancel`, { key });
      expect(again.status).toBe(409);
      expect(again.body).toMatchObject({ success: false, code: 409 });
      expect(again.body.data.message).toContain('cancelled');
      expect(await balance(gw, key)).toBe(1);

      const [hook] = await rx.waitForCount({ path: '/cancelled' }, 1, 10_000);
      expect(hook?.json).toEqual({ task_id: id, status: 'cancelled' });
      const record = await waitTask(gw, key, id, (t) => (t.callback_result?.length ?? 0) >= 1);
      expect(record.status).toBe('cancelled');
      expect(record.error_message).toBeUndefined();

      const listed = await api(gw, 'GET', '/v1/tasks?status=cancelled', { key });
      expect(listed.body.data.map((t: any) => t.task_id)).toEqual([id]);
      const processing = await api(gw, 'GET', '/v1/tasks?status=processing', { key });
      expect(processing.body.data).toEqual([]);
      const bad = await api(gw, 'GET', '/v1/tasks?status=canceled', { key });
      expect(bad.status).toBe(422);
      expect(bad.body.data.message).toContain('status');

      // A manual redelivery repeats the cancelled payload.
      const redo = await api(gw, 'POST', `/v1/tasks/${id}/callbacks/redeliver`, { key });
      expect(redo.status).toBe(200);
      const hooks = await rx.waitForCount({ path: '/cancelled' }, 2, 10_000);
      expect(hooks[1]?.json).toEqual({ task_id: id, status: 'cancelled' });
      expect(hooks[1]?.headers['webhook-id']).toBe(`msg_${id}`);
      expect(hooks[0]?.headers['webhook-id']).toBe(`msg_${id}`);

      // A finished task cannot be cancelled, and keeps its charge.
      const done = await createTask(gw, key, { model: 'sandbox/image', input: { prompt: 'quick', delay_ms: 0 } });
      await waitTask(gw, key, done, (t) => t.status === 'completed');
      const late = await api(gw, 'POST', `/v1/tasks/${done}/cancel`, { key });
      expect(late.status).toBe(409);
      expect(late.body.data.message).toContain('completed');
      expect((await api(gw, 'GET', `/v1/tasks/${done}`, { key })).body.data.cost).toBe(IMAGE_PRICE);
      expect(await balance(gw, key)).toBeCloseTo(1 - IMAGE_PRICE, 10);
    });

    test('cancel racing completion: each task ends in exactly one state, charged or refunded exactly once', async () => {
      const start = 2;
      const { userId, key } = await createAccount(gw, uniqueEmail('race'), start);
      const path = '/race';
      const url = rx.url(path);
      const n = 24;
      const delay = 300;
      // Cancels land from well before the job is ready to well after it finished, through the race in between.
      const results = await Promise.all(
        Array.from({ length: n }, async (_, i) => {
          const id = await createTask(gw, key, {
            model: 'sandbox/image',
            input: { prompt: `race ${i}`, delay_ms: delay },
            callback_url: url,
          });
          await Bun.sleep((i * 4000) / n);
          const res = await api(gw, 'POST', `/v1/tasks/${id}/cancel`, { key });
          return { id, status: res.status, body: res.body };
        }),
      );
      const finals = await Promise.all(
        results.map((r) => waitTask(gw, key, r.id, (t) => t.status !== 'processing' && t.callback_result?.length >= 1)),
      );
      let cancelled = 0;
      let completed = 0;
      for (const [i, r] of results.entries()) {
        const final = finals[i];
        if (r.status === 200) {
          cancelled++;
          expect(final.status).toBe('cancelled');
          expect(final.cost).toBe(0);
          expect(r.body.data.status).toBe('cancelled');
        } else {
          completed++;
          expect(r.status).toBe(409);
          expect(final.status).toBe('completed');
          expect(final.cost).toBe(IMAGE_PRICE);
          expect(final.output.image_url).toBeString();
        }
      }
      // The schedule makes both outcomes certain; what lies between is the race.
      expect(cancelled).toBeGreaterThan(0);
      expect(completed).toBeGreaterThan(0);
      expect(units(await balance(gw, key))).toBe(units(start) - completed * units(IMAGE_PRICE));

      // One webhook per task, whose status is the task's one ending.
      await Bun.sleep(500);
      for (const [i, r] of results.entries()) {
        const got = rx.received({ path, taskId: r.id });
        expect(got.map((g) => g.json.status)).toEqual([finals[i].status]);
      }

      if (databaseUrl) {
        const rows = await queryDatabase<{ task_id: string; kind: string; amount_usd: string }>(
          databaseUrl,
          'select task_id, kind, amount_usd from ledger_entries where account_id = $1 and task_id is not null',
          [userId],
        );
        for (const [i, r] of results.entries()) {
          const mine = rows.filter((row) => row.task_id === r.id);
          const charges = mine.filter((row) => row.kind === 'charge');
          const refunds = mine.filter((row) => row.kind === 'refund');
          expect(charges.map((c) => units(c.amount_usd))).toEqual([-units(IMAGE_PRICE)]);
          expect(refunds.map((c) => units(c.amount_usd))).toEqual(
            finals[i].status === 'cancelled' ? [units(IMAGE_PRICE)] : [],
          );
        }
        const [account] = await queryDatabase<{ balance_usd: string; ledger: string }>(
          databaseUrl,
          'select balance_usd, (select sum(amount_usd) from ledger_entries where account_id = $1) as ledger from accounts where id = $1',
          [userId],
        );
        expect(units(account!.balance_usd)).toBe(units(account!.ledger));
      }
    }, 60_000);

    test('Standard Webhooks: verified by the standardwebhooks library, webhook-id kept across retries', async () => {
      const { key } = await createAccount(gw, uniqueEmail('stdwh'), 1);
      const on = await api(gw, 'POST', '/v1/account/webhook-signing', { key, body: { enabled: true } });
      const { secret, standard_secret: standardSecret } = on.body.data;
      expect(standardSecret).toBe(standardSecretOf(secret));
      expect(standardSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);

      // Two failures, then 200: three attempts of one delivery.
      const path = '/std-retry';
      const id = await createTask(gw, key, {
        model: 'sandbox/image',
        input: { prompt: 'signed', delay_ms: 0 },
        callback_url: rx.url(path, plans.failFirst(2)),
      });
      const attempts = await rx.waitForCount({ path, taskId: id }, 3, 20_000);
      const wh = new Webhook(standardSecret);
      const ids = new Set<string>();
      for (const attempt of attempts) {
        expect(wh.verify(attempt.body, attempt.headers)).toEqual(JSON.parse(attempt.body));
        expect(attempt.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
        expect(attempt.headers['webhook-timestamp']).toBe(attempt.headers['x-webhook-timestamp']);
        // The gateway's own signature is still there and still verifies.
        expect(verifySignature(attempt, secret)).toBe(true);
        ids.add(attempt.headers['webhook-id'] ?? '');
      }
      expect(ids.size).toBe(1);
      expect([...ids][0]).toMatch(/^msg_/);

      // A tampered body, another secret or another id do not verify.
      const first = attempts[0]!;
      expect(() => wh.verify(first.body.replace('completed', 'failed'), first.headers)).toThrow();
      expect(() => new Webhook(standardSecretOf('00'.repeat(32))).verify(first.body, first.headers)).toThrow();
      expect(() => wh.verify(first.body, { ...first.headers, 'webhook-id': 'msg_other' })).toThrow();

      // Another task gets another id; after a reset the old secret stops verifying.
      const reset = await api(gw, 'POST', '/v1/account/webhook-signing/reset', { key });
      const second = await createTask(gw, key, {
        model: 'sandbox/image',
        input: { prompt: 'signed again', delay_ms: 0 },
        callback_url: rx.url('/std-second'),
      });
      const [next] = await rx.waitForCount({ path: '/std-second', taskId: second }, 1, 10_000);
      expect(next!.headers['webhook-id']).not.toBe([...ids][0]);
      expect(new Webhook(reset.body.data.standard_secret).verify(next!.body, next!.headers)).toBeTruthy();
      expect(() => wh.verify(next!.body, next!.headers)).toThrow();
    }, 30_000);

    test('unsigned deliveries carry webhook-id and webhook-timestamp, and no signature', async () => {
      const { key } = await createAccount(gw, uniqueEmail('unsigned'), 1);
      const id = await createTask(gw, key, {
        model: 'sandbox/image',
        input: { prompt: 'plain', delay_ms: 0 },
        callback_url: rx.url('/unsigned'),
      });
      const [hook] = await rx.waitForCount({ path: '/unsigned', taskId: id }, 1, 10_000);
      expect(hook!.headers['webhook-id']).toMatch(/^msg_/);
      expect(Math.abs(Number(hook!.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(5);
      expect(hook!.headers['webhook-signature']).toBeUndefined();
      expect(hook!.headers['x-webhook-signature']).toBeUndefined();
    });

    test('hostile task ids and LLM calls: 4xx, never 5xx', async () => {
      const { key } = await createAccount(gw, uniqueEmail('hostile'), 1);
      for (const id of ['%00', '%ED%A0%80', 'x'.repeat(5000), '%F0%9F%A6%8A', '..%2F..%2Fadmin']) {
        for (const [method, suffix] of [
          ['POST', 'cancel'],
          ['GET', 'events'],
        ] as const) {
          const res = await fetch(`${gw.url}/v1/tasks/${id}/${suffix}`, {
            method,
            headers: { authorization: `Bearer ${key}` },
          });
          await res.body?.cancel();
          expect(res.status).toBeGreaterThanOrEqual(400);
          expect(res.status).toBeLessThan(500);
        }
      }
      // An LLM call is a task too, but finished when it answers: 409.
      const chat = await api(gw, 'POST', '/v1/chat/completions', {
        key,
        body: { model: 'sandbox/echo', messages: [{ role: 'user', content: 'hi' }] },
      });
      expect(chat.status).toBe(200);
      const [llmTask] = (await api(gw, 'GET', '/v1/tasks?category=llm', { key })).body.data;
      const res = await api(gw, 'POST', `/v1/tasks/${llmTask.task_id}/cancel`, { key });
      expect(res.status).toBe(409);
      expect((await api(gw, 'GET', `/v1/tasks/${llmTask.task_id}`, { key })).body.data.status).toBe('completed');
    });

    test('an account holds at most TASK_EVENTS_MAX_STREAMS_PER_ACCOUNT streams open; a closed one frees its place', async () => {
      const { key } = await createAccount(gw, uniqueEmail('events-cap'), 1);
      const { key: otherKey } = await createAccount(gw, uniqueEmail('events-cap-other'), 1);
      const id = await createTask(gw, key, { model: 'sandbox/image', input: { prompt: 'held', delay_ms: 20_000 } });
      const open = await Promise.all(Array.from({ length: 4 }, () => openTaskEvents(gw, key, id)));
      expect(open.map((s) => s.status)).toEqual([200, 200, 200, 200]);
      // The fifth is refused with the envelope and retry-after; it held a connection for the task's life.
      const fifth = await api(gw, 'GET', `/v1/tasks/${id}/events`, { key });
      expect(fifth.status).toBe(429);
      expect(fifth.body.data.message).toContain('too many open task event streams: at most 4 per account');
      expect(Number(fifth.headers.get('retry-after'))).toBeGreaterThan(0);
      // Another account is not held back.
      const theirs = await createTask(gw, otherKey, { model: 'sandbox/image', input: { prompt: 'free', delay_ms: 0 } });
      const other = await openTaskEvents(gw, otherKey, theirs);
      expect(other.status).toBe(200);
      await other.ended;
      // Closing one (the client goes away) frees its place.
      open[0]!.close();
      let reopened: Awaited<ReturnType<typeof openTaskEvents>> | undefined;
      for (let i = 0; i < 50 && reopened?.status !== 200; i++) {
        await Bun.sleep(50);
        reopened = await openTaskEvents(gw, key, id);
        if (reopened.status !== 200) reopened.close();
      }
      expect(reopened?.status).toBe(200);
      for (const s of [...open.slice(1), reopened]) s?.close();
      expect((await api(gw, 'POST', `/v1/tasks/${id}/cancel`, { key })).status).toBe(200);
    });

    test('revoking the key an event stream was opened with ends the stream: it shows the task no further', async () => {
      const { key } = await createAccount(gw, uniqueEmail('events-revoked'), 1);
      const made = await api(gw, 'POST', '/v1/keys', { key, body: { name: 'watcher' } });
      expect(made.status).toBe(200);
      const id = await createTask(gw, key, { model: 'sandbox/image', input: { prompt: 'held', delay_ms: 3_000 } });
      const stream = await openTaskEvents(gw, made.body.data.key, id);
      expect(stream.status).toBe(200);
      await stream.waitFor((r) => r.length >= 1, 5_000);
      expect((await api(gw, 'DELETE', `/v1/keys/${made.body.data.id}`, { key })).status).toBe(200);
      const t0 = Date.now();
      await stream.ended;
      // Within a heartbeat or so (200 ms here), long before the task ends.
      expect(Date.now() - t0).toBeLessThan(2_000);
      expect(stream.records.map((r) => r.status)).toEqual(['processing']);
    });

    test('events: the record at once and on every change, heartbeats, the end after the terminal status', async () => {
      const { key } = await createAccount(gw, uniqueEmail('events'), 1);
      const id = await createTask(gw, key, { model: 'sandbox/image', input: { prompt: 'live', delay_ms: 1500 } });
      const stream = await openTaskEvents(gw, key, id);
      expect(stream.status).toBe(200);
      expect(stream.headers.get('content-type')).toStartWith('text/event-stream');
      await stream.waitFor((r) => r.length >= 1, 5_000);
      expect(stream.records[0]).toMatchObject({ task_id: id, status: 'processing' });
      await stream.ended;
      expect(stream.records.map((r) => r.status)).toEqual(['processing', 'completed']);
      expect(stream.otherEvents).toEqual([]);
      expect(stream.heartbeats).toBeGreaterThan(0);
      // Each event is the same JSON as GET /v1/tasks/{id} data.
      const read = await api(gw, 'GET', `/v1/tasks/${id}`, { key });
      expect(stream.records.at(-1)).toEqual(read.body.data);

      // After the end: the final record and the end, at once.
      const t0 = Date.now();
      const late = await openTaskEvents(gw, key, id);
      await late.ended;
      expect(Date.now() - t0).toBeLessThan(1_000);
      expect(late.records).toEqual([read.body.data]);

      // A cancel is a change too.
      const slow = await createTask(gw, key, { model: 'sandbox/image', input: { prompt: 'stop', delay_ms: 20_000 } });
      const watching = await openTaskEvents(gw, key, slow);
      await watching.waitFor((r) => r.length >= 1, 5_000);
      expect((await api(gw, 'POST', `/v1/tasks/${slow}/cancel`, { key })).status).toBe(200);
      await watching.ended;
      expect(watching.records.map((r) => r.status)).toEqual(['processing', 'cancelled']);

      // Unknown, another account's, or no key.
      const { key: otherKey } = await createAccount(gw, uniqueEmail('events-other'), 1);
      expect((await openTaskEvents(gw, otherKey, id)).status).toBe(404);
      expect((await openTaskEvents(gw, key, 'nope')).status).toBe(404);
      expect((await openTaskEvents(gw, 'bad-key', id)).status).toBe(401);
    }, 30_000);
  });
}

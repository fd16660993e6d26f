import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { api, createAccount, uniqueEmail } from '../helpers/api.ts';
import { startGateway, type GatewayProcess } from '../helpers/gateway-process.ts';
import { REDIS_URL, createTestDatabase } from '../helpers/services.ts';
import { openTaskEvents } from '../helpers/task-events.ts';

/**
 * `GET /v1/tasks/{id}/events` across instances sharing Postgres and Redis: a change made on
 * one instance reaches streams on every instance through the store's pub/sub. The heartbeat
 * (which also re-reads the task) is set far beyond the test's waits, so only a published
 * change can deliver a transition in time.
 */
describe('task events on two instances', () => {
  let a: GatewayProcess;
  let b: GatewayProcess;

  beforeAll(async () => {
    const databaseUrl = await createTestDatabase('liveinst');
    const env = {
      DATABASE_URL: databaseUrl,
      REDIS_URL,
      REDIS_KEY_PREFIX: `${new URL(databaseUrl).pathname.slice(1)}:`,
      TASK_EVENTS_HEARTBEAT_MS: '120000',
    };
    [a, b] = await Promise.all([startGateway(env), startGateway(env)]);
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  test('two subscribers on two instances see the same transitions, whichever instance runs the task', async () => {
    const { key } = await createAccount(a, uniqueEmail('inst'), 1);
    const created = await api(a, 'POST', '/v1/tasks', {
      key,
      body: { model: 'sandbox/image', input: { prompt: 'two views', delay_ms: 1500 } },
    });
    const id = created.body.data.task_id as string;
    const [onA, onB] = await Promise.all([openTaskEvents(a, key, id), openTaskEvents(b, key, id)]);
    expect([onA.status, onB.status]).toEqual([200, 200]);
    await Promise.all([onA.ended, onB.ended]);
    expect(onA.records.map((r) => r.status)).toEqual(['processing', 'completed']);
    expect(onB.records).toEqual(onA.records);
    expect(onA.records[1].output.image_url).toBeString();
  }, 30_000);

  test('a cancel on one instance ends the streams on both at once', async () => {
    const { key } = await createAccount(a, uniqueEmail('inst-cancel'), 1);
    const created = await api(a, 'POST', '/v1/tasks', {
      key,
      body: { model: 'sandbox/image', input: { prompt: 'stop me', delay_ms: 60_000 } },
    });
    const id = created.body.data.task_id as string;
    const [onA, onB] = await Promise.all([openTaskEvents(a, key, id), openTaskEvents(b, key, id)]);
    await Promise.all([onA.waitFor((r) => r.length === 1), onB.waitFor((r) => r.length === 1)]);
    const cancelledAt = Date.now();
    expect((await api(b, 'POST', `/v1/tasks/${id}/cancel`, { key })).status).toBe(200);
    await Promise.all([onA.ended, onB.ended]);
    expect(Date.now() - cancelledAt).toBeLessThan(2_000);
    for (const stream of [onA, onB]) {
      expect(stream.records.map((r) => r.status)).toEqual(['processing', 'cancelled']);
      expect(stream.records[1].cost).toBe(0);
    }
    expect(onA.records).toEqual(onB.records);
  }, 30_000);

  test('many streams of many tasks on both instances each end with their own task', async () => {
    const { key } = await createAccount(a, uniqueEmail('inst-many'), 5);
    const ids = await Promise.all(
      Array.from({ length: 10 }, async (_, i) => {
        const res = await api(i % 2 ? a : b, 'POST', '/v1/tasks', {
          key,
          body: { model: 'sandbox/image', input: { prompt: `many ${i}`, delay_ms: 1000 + 100 * i } },
        });
        return res.body.data.task_id as string;
      }),
    );
    const streams = await Promise.all(ids.flatMap((id) => [openTaskEvents(a, key, id), openTaskEvents(b, key, id)]));
    await Promise.all(streams.map((s) => s.ended));
    for (const [i, s] of streams.entries()) {
      const id = ids[Math.floor(i / 2)];
      expect(s.records.map((r) => [r.task_id, r.status])).toEqual([
        [id, 'processing'],
        [id, 'completed'],
      ]);
    }
  }, 30_000);

  test('SIGTERM ends open streams at once, and a client reconnecting to the other instance carries on', async () => {
    const { PORT: _taken, ...shared } = a.env;
    const c = await startGateway(shared);
    const { key } = await createAccount(a, uniqueEmail('inst-stop'), 1);
    const created = await api(a, 'POST', '/v1/tasks', {
      key,
      body: { model: 'sandbox/image', input: { prompt: 'outlive', delay_ms: 60_000 } },
    });
    const id = created.body.data.task_id as string;
    const onC = await openTaskEvents(c, key, id);
    await onC.waitFor((r) => r.length === 1);
    const t0 = Date.now();
    expect(await c.stop('SIGTERM')).toBe(0);
    await onC.ended;
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(onC.records.map((r) => r.status)).toEqual(['processing']);

    const onB = await openTaskEvents(b, key, id);
    await onB.waitFor((r) => r.length === 1);
    expect((await api(a, 'POST', `/v1/tasks/${id}/cancel`, { key })).status).toBe(200);
    await onB.ended;
    expect(onB.records.map((r) => r.status)).toEqual(['processing', 'cancelled']);
  }, 30_000);
});

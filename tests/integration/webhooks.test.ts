import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { api, createAccount, uniqueEmail } from '../helpers/api.ts';
import { MODES, freePort, startGateway, type GatewayProcess } from '../helpers/gateway-process.ts';
import { REDIS_URL, createTestDatabase } from '../helpers/services.ts';
import {
  WebhookReceiver,
  expectedSignature,
  plans,
  reply,
  standardSecretOf,
  verifySignature,
  type Received,
} from '../helpers/webhook-receiver.ts';

/**
 * Webhook callbacks (docs/webhooks.md) against a real loopback receiver: payloads,
 * retries at WEBHOOK_RETRY_DELAYS after the finish, the callback log, signing, redelivery.
 * The slow scenarios are all started in beforeAll so they run side by side.
 */

const RETRY_ENV = { ALLOW_PRIVATE_URLS: 'true', WEBHOOK_RETRY_DELAYS: '1,2,3,4' };
const HEX64 = /^[0-9a-f]{64}$/;

async function createTask(gw: GatewayProcess, key: string, body: Record<string, unknown>): Promise<string> {
  const res = await api(gw, 'POST', '/v1/tasks', { key, body });
  if (res.status !== 200) throw new Error(`task creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.task_id as string;
}

/** Polls GET /v1/tasks/{id} until `until` holds; returns the task record. */
async function waitTask(
  gw: GatewayProcess,
  key: string,
  id: string,
  until: (task: any) => boolean,
  timeoutMs = 15_000,
): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await api(gw, 'GET', `/v1/tasks/${id}`, { key });
    if (res.status === 200 && until(res.body.data)) return res.body.data;
    if (Date.now() > deadline)
      throw new Error(
        `task ${id} did not reach the expected state within ${timeoutMs} ms: ${res.status} ${JSON.stringify(res.body)}`,
      );
    await Bun.sleep(50);
  }
}

const logLength = (n: number) => (task: any) => (task.callback_result?.length ?? 0) >= n;
const finished = (task: any) => task.status !== 'processing';

/** Sleeps until `at` (Date.now() ms). */
const sleepUntil = (at: number) => Bun.sleep(Math.max(0, at - Date.now()));

/** A promise whose rejection is reported where it is awaited, never as unhandled. */
function spawn<T>(fn: () => Promise<T>): Promise<T> {
  const p = fn();
  p.catch(() => undefined);
  return p;
}

function expectSentAt(entry: { sent_at: number }, arrivedAtMs: number) {
  expect(entry.sent_at).toBeNumber();
  expect(Number.isInteger(entry.sent_at)).toBe(true);
  expect(Math.abs(entry.sent_at - arrivedAtMs / 1000)).toBeLessThanOrEqual(2);
}

for (const mode of MODES) {
  describe(`webhook callbacks [${mode.name}]`, () => {
    let gw: GatewayProcess;
    let rx: WebhookReceiver;
    let plain: string;
    let signedKey: string;
    let signedSecret: string;
    let resetKey: string;
    let resetOldSecret: string;
    let disabledKey: string;
    let disabledSecret: string;
    let otherKey: string;
    let closedPortUrl: string;
    const id: Record<string, string> = {};
    let resetScenario: Promise<{ newSecret: string; resetDoneAt: number; resetBody: any }>;
    let capScenario: Promise<{ statuses: number[]; entries: any[]; firstAt: number }>;

    beforeAll(async () => {
      rx = WebhookReceiver.start();
      gw = await startGateway({ ...(await mode.env('webhooks')), ...RETRY_ENV });
      ({ key: plain } = await createAccount(gw, uniqueEmail('wh-plain'), 20));
      ({ key: signedKey } = await createAccount(gw, uniqueEmail('wh-signed'), 5));
      ({ key: resetKey } = await createAccount(gw, uniqueEmail('wh-reset'), 5));
      ({ key: disabledKey } = await createAccount(gw, uniqueEmail('wh-disabled'), 5));
      ({ key: otherKey } = await createAccount(gw, uniqueEmail('wh-other'), 5));

      const on = await api(gw, 'POST', '/v1/account/webhook-signing', { key: signedKey, body: { enabled: true } });
      expect(on.status).toBe(200);
      signedSecret = on.body.data.secret;
      resetOldSecret = (
        await api(gw, 'POST', '/v1/account/webhook-signing', { key: resetKey, body: { enabled: true } })
      ).body.data.secret;
      disabledSecret = (
        await api(gw, 'POST', '/v1/account/webhook-signing', { key: disabledKey, body: { enabled: true } })
      ).body.data.secret;
      const off = await api(gw, 'POST', '/v1/account/webhook-signing', { key: disabledKey, body: { enabled: false } });
      expect(off.body.data).toEqual({
        enabled: false,
        secret: disabledSecret,
        standard_secret: standardSecretOf(disabledSecret),
      });

      const closedPort = await freePort();
      closedPortUrl = `http://127.0.0.1:${closedPort}/nobody-listens`;
      const image = (extra: Record<string, unknown> = {}) => ({ prompt: 'a red fox', delay_ms: 200, ...extra });
      const specs: Array<[string, string, Record<string, unknown>]> = [
        ['okImage', plain, { model: 'sandbox/image', input: image(), callback_url: rx.url('/ok-image') }],
        [
          'okSpeech',
          plain,
          {
            model: 'sandbox/speech',
            input: { text: 'hello webhook', delay_ms: 200 },
            callback_url: rx.url('/ok-speech'),
          },
        ],
        [
          'okVideo',
          plain,
          { model: 'sandbox/video', input: { prompt: 'waves', delay_ms: 200 }, callback_url: rx.url('/ok-video') },
        ],
        ['failed', plain, { model: 'sandbox/image', input: image({ fail: true }), callback_url: rx.url('/failed') }],
        [
          'always500',
          plain,
          { model: 'sandbox/image', input: image(), callback_url: rx.url('/always-500', plans.always(500)) },
        ],
        ['refused', plain, { model: 'sandbox/image', input: image(), callback_url: closedPortUrl }],
        [
          'redirect',
          plain,
          {
            model: 'sandbox/image',
            input: image(),
            callback_url: rx.url('/redirect', () => reply.redirect(rx.url('/redirect-target'))),
          },
        ],
        [
          'hang',
          plain,
          {
            model: 'sandbox/image',
            input: image(),
            callback_url: rx.url('/hang', plans.sequence(reply.hang(13_000), reply.ok())),
          },
        ],
        [
          'close',
          plain,
          {
            model: 'sandbox/image',
            input: image(),
            callback_url: rx.url('/close', plans.sequence(reply.close(), reply.ok())),
          },
        ],
        ['signed', signedKey, { model: 'sandbox/image', input: image(), callback_url: rx.url('/signed') }],
        [
          'signedFailed',
          signedKey,
          { model: 'sandbox/image', input: image({ fail: true }), callback_url: rx.url('/signed-failed') },
        ],
        [
          'reset',
          resetKey,
          { model: 'sandbox/image', input: image(), callback_url: rx.url('/signed-reset', plans.failFirst(2)) },
        ],
        ['disabled', disabledKey, { model: 'sandbox/image', input: image(), callback_url: rx.url('/disabled') }],
        ['redeliver', signedKey, { model: 'sandbox/image', input: image(), callback_url: rx.url('/redeliver') }],
        ['full', plain, { model: 'sandbox/image', input: image(), callback_url: rx.url('/full') }],
        [
          'capPending',
          plain,
          { model: 'sandbox/image', input: image(), callback_url: rx.url('/cap-pending', plans.always(500)) },
        ],
        ['noCallback', plain, { model: 'sandbox/image', input: image({ delay_ms: 0 }) }],
      ];
      const ids = await Promise.all(specs.map(([, key, body]) => createTask(gw, key, body)));
      specs.forEach(([name], i) => {
        id[name] = ids[i] as string;
      });

      // Reset the secret as soon as the first (failing) attempt arrived: the retry at +1 s must use the new one.
      resetScenario = spawn(async () => {
        await rx.waitForCount({ path: '/signed-reset' }, 1, 15_000);
        const res = await api(gw, 'POST', '/v1/account/webhook-signing/reset', { key: resetKey });
        return { newSecret: res.body?.data?.secret, resetDoneAt: Date.now(), resetBody: res.body };
      });
      // Redeliver as often as allowed while automatic retries are still due (the log cap must hold).
      capScenario = spawn(async () => {
        const [first] = await rx.waitForCount({ path: '/cap-pending' }, 1, 15_000);
        const statuses: number[] = [];
        const entries: any[] = [];
        for (let i = 0; i < 12; i++) {
          const res = await api(gw, 'POST', `/v1/tasks/${id.capPending}/callbacks/redeliver`, { key: plain });
          statuses.push(res.status);
          if (res.status !== 200) break;
          entries.push(res.body.data);
        }
        return { statuses, entries, firstAt: (first as Received).at };
      });
    }, 60_000);

    afterAll(async () => {
      await gw?.stop();
      rx?.stop();
    });

    test('completed image: exact payload (data = the task output), JSON content type, POST, unsigned, delivered exactly once', async () => {
      const [req] = await rx.waitForCount({ path: '/ok-image' }, 1, 15_000);
      const hit = req as Received;
      const task = await waitTask(gw, plain, id.okImage as string, logLength(1));
      expect(task.status).toBe('completed');
      expect(task.output.image_url).toBeString();
      const expected = { task_id: id.okImage, status: 'completed', data: task.output };
      expect(hit.method).toBe('POST');
      expect(hit.headers['content-type']).toMatch(/^application\/json(;|$)/);
      expect(JSON.parse(hit.body)).toEqual(expected);
      expect(Object.keys(JSON.parse(hit.body)).sort()).toEqual(['data', 'status', 'task_id']);
      expect(hit.json).toEqual(expected);
      // Signing is off for this account: no signature headers at all.
      expect(hit.headers['x-webhook-signature']).toBeUndefined();
      expect(hit.headers['x-webhook-timestamp']).toBeUndefined();
      // The URL in the payload serves the real file.
      const file = await fetch(task.output.image_url);
      expect(file.status).toBe(200);
      expect(file.headers.get('content-type')).toStartWith('image/png');
      await file.arrayBuffer();

      // Retries would come at +1..+4 s: wait past them; a 200 is delivered exactly once.
      await sleepUntil(hit.at + 4_800);
      expect(rx.received({ path: '/ok-image' })).toHaveLength(1);
      const after = await waitTask(gw, plain, id.okImage as string, logLength(1));
      expect(after.callback_result).toHaveLength(1);
      expect(after.callback_result[0]).toMatchObject({ status: 200, status_text: 'OK' });
      expectSentAt(after.callback_result[0], hit.at);
    });

    test('completed speech and video: data is audio_url / video_url, exactly the task output', async () => {
      for (const [name, path, field] of [
        ['okSpeech', '/ok-speech', 'audio_url'],
        ['okVideo', '/ok-video', 'video_url'],
      ] as const) {
        const [hit] = await rx.waitForCount({ path }, 1, 15_000);
        const task = await waitTask(gw, plain, id[name] as string, logLength(1));
        expect(task.status).toBe('completed');
        expect(task.output[field]).toBeString();
        expect(JSON.parse((hit as Received).body)).toEqual({
          task_id: id[name],
          status: 'completed',
          data: task.output,
        });
        expect((hit as Received).headers['content-type']).toMatch(/^application\/json(;|$)/);
        await sleepUntil((hit as Received).at + 4_800);
        expect(rx.received({ path })).toHaveLength(1);
      }
    });

    test('failed task: exact payload {task_id, status: failed, error_message}, once', async () => {
      const [req] = await rx.waitForCount({ path: '/failed' }, 1, 15_000);
      const hit = req as Received;
      const task = await waitTask(gw, plain, id.failed as string, logLength(1));
      expect(task.status).toBe('failed');
      expect(task.error_message).toBe('sandbox: simulated failure');
      expect(JSON.parse(hit.body)).toEqual({
        task_id: id.failed,
        status: 'failed',
        error_message: 'sandbox: simulated failure',
      });
      expect(hit.headers['content-type']).toMatch(/^application\/json(;|$)/);
      expect(hit.headers['x-webhook-signature']).toBeUndefined();
      await sleepUntil(hit.at + 4_800);
      expect(rx.received({ path: '/failed' })).toHaveLength(1);
      // A redelivery of a failed task carries the same failed payload.
      const again = await api(gw, 'POST', `/v1/tasks/${id.failed}/callbacks/redeliver`, { key: plain });
      expect(again.status).toBe(200);
      expect(again.body.data).toMatchObject({ status: 200, status_text: 'OK' });
      const hits = rx.received({ path: '/failed' });
      expect(hits).toHaveLength(2);
      expect(JSON.parse((hits[1] as Received).body)).toEqual(JSON.parse(hit.body));
    });

    test('a receiver answering 500: retries about 1, 2, 3, 4 s after the finish, then stops (5 attempts, all logged)', async () => {
      const hits = await rx.waitForCount({ path: '/always-500' }, 5, 20_000);
      const first = (hits[0] as Received).at;
      const offsets = hits.map((h) => h.at - first);
      // Attempt k+1 is due k seconds after the finish (the first attempt is sent at the finish).
      for (let k = 1; k <= 4; k++) {
        expect(offsets[k]).toBeGreaterThanOrEqual(k * 1000 - 300);
        expect(offsets[k]).toBeLessThanOrEqual(k * 1000 + 900);
      }
      // Nothing after the fifth: the next would have been due by +5 s.
      await sleepUntil(first + 7_000);
      expect(rx.received({ path: '/always-500' })).toHaveLength(5);
      for (const h of hits) expect(JSON.parse(h.body)).toEqual(JSON.parse((hits[0] as Received).body));
      const task = await waitTask(gw, plain, id.always500 as string, logLength(5));
      expect(task.callback_result).toHaveLength(5);
      task.callback_result.forEach((entry: any, i: number) => {
        expect(entry).toEqual({ sent_at: expect.any(Number), status: 500, status_text: 'Internal Server Error' });
        expectSentAt(entry, (hits[i] as Received).at);
      });
    });

    test('nothing listening: status 0 with the error text, and retried like any failure', async () => {
      const task = await waitTask(gw, plain, id.refused as string, logLength(5), 15_000);
      expect(task.status).toBe('completed');
      expect(task.callback_result).toHaveLength(5);
      for (const entry of task.callback_result) {
        expect(entry.status).toBe(0);
        expect(entry.status_text).toBeString();
        expect(entry.status_text).toMatch(/connect|refused/i);
      }
      const spread = task.callback_result[4].sent_at - task.callback_result[0].sent_at;
      expect(spread).toBeGreaterThanOrEqual(3);
      expect(spread).toBeLessThanOrEqual(6);
    });

    test('a 302 counts as a failed attempt and is not followed', async () => {
      const hits = await rx.waitForCount({ path: '/redirect' }, 2, 15_000);
      // The retry proves the 302 was a failure.
      expect((hits[1] as Received).at - (hits[0] as Received).at).toBeGreaterThanOrEqual(700);
      const task = await waitTask(gw, plain, id.redirect as string, logLength(2));
      expect(task.callback_result[0]).toMatchObject({ status: 302, status_text: 'Found' });
      expect(task.callback_result[1]).toMatchObject({ status: 302 });
      expect(rx.received({ path: '/redirect-target' })).toHaveLength(0);
    });

    test('no answer within 10 s: status 0 with the timeout, then the due retry is made at once', async () => {
      const hits = await rx.waitForCount({ path: '/hang' }, 2, 25_000);
      const gap = (hits[1] as Received).at - (hits[0] as Received).at;
      expect(gap).toBeGreaterThanOrEqual(9_500);
      expect(gap).toBeLessThanOrEqual(12_000);
      const task = await waitTask(gw, plain, id.hang as string, logLength(2));
      expect(task.callback_result[0].status).toBe(0);
      expect(task.callback_result[0].status_text).toMatch(/10000 ms|time/i);
      expect(task.callback_result[1]).toMatchObject({ status: 200, status_text: 'OK' });
    });

    test('connection closed without an answer: status 0 with an error text; the retry is delivered', async () => {
      await rx.waitForCount({ path: '/close' }, 2, 15_000);
      const task = await waitTask(gw, plain, id.close as string, logLength(2));
      expect(task.callback_result[0].status).toBe(0);
      expect(task.callback_result[0].status_text.length).toBeGreaterThan(0);
      expect(task.callback_result[1]).toMatchObject({ status: 200, status_text: 'OK' });
      await Bun.sleep(1_500);
      expect(rx.received({ path: '/close' })).toHaveLength(2);
    });

    test('signing on: timestamp and HMAC-SHA256 over the raw body verify with the secret from the endpoint', async () => {
      expect(signedSecret).toMatch(HEX64);
      const got = await api(gw, 'GET', '/v1/account/webhook-signing', { key: signedKey });
      expect(got.body.data).toEqual({
        enabled: true,
        secret: signedSecret,
        standard_secret: standardSecretOf(signedSecret),
      });
      for (const path of ['/signed', '/signed-failed']) {
        const [req] = await rx.waitForCount({ path }, 1, 15_000);
        const hit = req as Received;
        const ts = hit.headers['x-webhook-timestamp'] as string;
        expect(ts).toMatch(/^\d{10}$/);
        expect(Math.abs(Number(ts) - hit.at / 1000)).toBeLessThanOrEqual(5);
        expect(hit.headers['x-webhook-signature']).toMatch(HEX64);
        expect(hit.headers['x-webhook-signature']).toBe(expectedSignature(signedSecret, ts, hit.body));
        expect(verifySignature(hit, signedSecret)).toBe(true);
        // The verifier can fail: another secret, a changed body, a changed timestamp.
        expect(verifySignature(hit, 'f'.repeat(64))).toBe(false);
        expect(verifySignature({ ...hit, body: `${hit.body} ` }, signedSecret)).toBe(false);
        expect(
          verifySignature(
            { ...hit, headers: { ...hit.headers, 'x-webhook-timestamp': String(Number(ts) + 1) } },
            signedSecret,
          ),
        ).toBe(false);
      }
    });

    test('signing disabled after being on: no signature headers, the secret is kept', async () => {
      const [hit] = await rx.waitForCount({ path: '/disabled' }, 1, 15_000);
      expect((hit as Received).headers['x-webhook-signature']).toBeUndefined();
      expect((hit as Received).headers['x-webhook-timestamp']).toBeUndefined();
      const got = await api(gw, 'GET', '/v1/account/webhook-signing', { key: disabledKey });
      expect(got.body.data).toEqual({
        enabled: false,
        secret: disabledSecret,
        standard_secret: standardSecretOf(disabledSecret),
      });
    });

    test('reset: the next attempt verifies with the new secret and not with the old one', async () => {
      const { newSecret, resetDoneAt, resetBody } = await resetScenario;
      expect(resetBody).toMatchObject({ success: true, data: { enabled: true } });
      expect(newSecret).toMatch(HEX64);
      expect(newSecret).not.toBe(resetOldSecret);
      const hits = await rx.waitForCount({ path: '/signed-reset' }, 3, 15_000);
      const [first, ...later] = hits as [Received, ...Received[]];
      expect(verifySignature(first, resetOldSecret)).toBe(true);
      expect(verifySignature(first, newSecret)).toBe(false);
      expect(later.length).toBeGreaterThanOrEqual(2);
      for (const hit of later) {
        expect(hit.at).toBeGreaterThan(resetDoneAt);
        expect(verifySignature(hit, newSecret)).toBe(true);
        expect(verifySignature(hit, resetOldSecret)).toBe(false);
      }
      // Signed afresh per attempt: the retries carry their own timestamps.
      expect(Number(later[1]?.headers['x-webhook-timestamp'])).toBeGreaterThan(
        Number(first.headers['x-webhook-timestamp']),
      );
      const task = await waitTask(gw, resetKey, id.reset as string, logLength(3));
      expect(task.callback_result.map((e: any) => e.status)).toEqual([500, 500, 200]);
      const got = await api(gw, 'GET', '/v1/account/webhook-signing', { key: resetKey });
      expect(got.body.data).toEqual({ enabled: true, secret: newSecret, standard_secret: standardSecretOf(newSecret) });
      // A manual redelivery after the reset is signed with the new secret too.
      const again = await api(gw, 'POST', `/v1/tasks/${id.reset}/callbacks/redeliver`, { key: resetKey });
      expect(again.status).toBe(200);
      const last = rx.received({ path: '/signed-reset' }).at(-1) as Received;
      expect(last.seq).toBeGreaterThan((hits.at(-1) as Received).seq);
      expect(verifySignature(last, newSecret)).toBe(true);
      expect(verifySignature(last, resetOldSecret)).toBe(false);
    });

    test('redelivery: answers the new log entry, the receiver gets it signed with the current secret', async () => {
      const [firstReq] = await rx.waitForCount({ path: '/redeliver' }, 1, 15_000);
      const first = firstReq as Received;
      await waitTask(gw, signedKey, id.redeliver as string, logLength(1));
      const res = await api(gw, 'POST', `/v1/tasks/${id.redeliver}/callbacks/redeliver`, { key: signedKey });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ success: true, code: 200 });
      expect(res.body.data).toEqual({ sent_at: expect.any(Number), status: 200, status_text: 'OK' });
      // Sent before the call answered.
      const hits = rx.received({ path: '/redeliver' });
      expect(hits).toHaveLength(2);
      const second = hits[1] as Received;
      expectSentAt(res.body.data, second.at);
      expect(second.json).toEqual(first.json);
      expect(verifySignature(second, signedSecret)).toBe(true);
      const task = await waitTask(gw, signedKey, id.redeliver as string, logLength(2));
      expect(task.callback_result).toHaveLength(2);
      expect(task.callback_result[1]).toEqual(res.body.data);
    });

    test('the log holds 10: nine redeliveries after one delivery, then 409 and nothing more is sent', async () => {
      await rx.waitForCount({ path: '/full' }, 1, 15_000);
      await waitTask(gw, plain, id.full as string, logLength(1));
      for (let i = 0; i < 9; i++) {
        const res = await api(gw, 'POST', `/v1/tasks/${id.full}/callbacks/redeliver`, { key: plain });
        expect(res.status).toBe(200);
        expect(res.body.data).toMatchObject({ status: 200 });
      }
      const refused = await api(gw, 'POST', `/v1/tasks/${id.full}/callbacks/redeliver`, { key: plain });
      expect(refused.status).toBe(409);
      expect(refused.body).toEqual({ success: false, code: 409, data: { message: expect.any(String) } });
      await Bun.sleep(1_500);
      expect(rx.received({ path: '/full' })).toHaveLength(10);
      const task = await waitTask(gw, plain, id.full as string, logLength(10));
      expect(task.callback_result).toHaveLength(10);
      expect(task.callback_result.every((e: any) => e.status === 200)).toBe(true);
    });

    test('the log cap of 10 holds when redeliveries are made while automatic retries are still due', async () => {
      const { statuses, entries, firstAt } = await capScenario;
      // Some redeliveries were accepted, each answered with the receiver's 500, and then one was refused.
      expect(entries.length).toBeGreaterThan(0);
      for (const entry of entries) expect(entry).toMatchObject({ status: 500 });
      expect(statuses.at(-1)).toBe(409);
      // Let every automatic retry that is still due (up to +4 s after the finish) happen.
      await sleepUntil(firstAt + 6_500);
      const task = await waitTask(gw, plain, id.capPending as string, logLength(1));
      expect(rx.received({ path: '/cap-pending' }).length).toBeLessThanOrEqual(10);
      expect(task.callback_result.length).toBeLessThanOrEqual(10);
    });

    test('redelivery refusals: 409 while processing, 422 without callback_url, 404 for another account or an unknown id', async () => {
      const slow = await createTask(gw, plain, {
        model: 'sandbox/image',
        input: { prompt: 'slow', delay_ms: 5000 },
        callback_url: rx.url('/slow'),
      });
      const processing = await api(gw, 'POST', `/v1/tasks/${slow}/callbacks/redeliver`, { key: plain });
      expect((await api(gw, 'GET', `/v1/tasks/${slow}`, { key: plain })).body.data.status).toBe('processing');
      expect(processing.status).toBe(409);
      expect(processing.body).toMatchObject({ success: false, code: 409 });
      expect(rx.received({ path: '/slow' })).toHaveLength(0);

      await waitTask(gw, plain, id.noCallback as string, finished);
      const none = await api(gw, 'POST', `/v1/tasks/${id.noCallback}/callbacks/redeliver`, { key: plain });
      expect(none.status).toBe(422);
      expect(none.body).toMatchObject({
        success: false,
        code: 422,
        data: { message: expect.stringContaining('callback_url') },
      });

      await waitTask(gw, plain, id.okImage as string, logLength(1));
      const before = rx.received({ path: '/ok-image' }).length;
      const foreign = await api(gw, 'POST', `/v1/tasks/${id.okImage}/callbacks/redeliver`, { key: otherKey });
      expect(foreign.status).toBe(404);
      expect(foreign.body).toMatchObject({ success: false, code: 404 });
      const unknown = await api(gw, 'POST', `/v1/tasks/${crypto.randomUUID()}/callbacks/redeliver`, { key: plain });
      expect(unknown.status).toBe(404);
      await Bun.sleep(300);
      expect(rx.received({ path: '/ok-image' })).toHaveLength(before);
      // Nothing was added to the owner's log by the refused calls.
      expect((await waitTask(gw, plain, id.okImage as string, logLength(1))).callback_result).toHaveLength(1);
    });
  });
}

describe('callback_url to a private address without ALLOW_PRIVATE_URLS', () => {
  let gw: GatewayProcess;
  let key: string;

  beforeAll(async () => {
    const databaseUrl = await createTestDatabase('whprivate');
    gw = await startGateway({
      DATABASE_URL: databaseUrl,
      REDIS_URL,
      REDIS_KEY_PREFIX: `${new URL(databaseUrl).pathname.slice(1)}:`,
    });
    ({ key } = await createAccount(gw, uniqueEmail('wh-private'), 5));
  }, 30_000);
  afterAll(async () => {
    await gw?.stop();
  });

  test('refused with 422 at creation; nothing created or charged', async () => {
    const rx = WebhookReceiver.start();
    try {
      const input = { prompt: 'x', delay_ms: 0 };
      // Control: a public address passes the same check (dry run, so nothing is ever sent).
      const control = await api(gw, 'POST', '/v1/tasks', {
        key,
        body: { model: 'sandbox/image', input, callback_url: 'http://93.184.216.34/hook', dry_run: true },
      });
      expect(control.status).toBe(200);
      for (const url of [
        rx.url('/private'),
        `http://localhost:${rx.port}/private`,
        'http://10.1.2.3/hook',
        'http://192.168.1.10/hook',
        'http://169.254.169.254/latest',
        'http://[::1]/hook',
      ]) {
        const res = await api(gw, 'POST', '/v1/tasks', {
          key,
          body: { model: 'sandbox/image', input, callback_url: url },
        });
        expect(res.status).toBe(422);
        expect(res.body).toEqual({
          success: false,
          code: 422,
          data: { message: expect.stringContaining('callback_url') },
        });
      }
      const account = await api(gw, 'GET', '/v1/account', { key });
      expect(account.body.data.balance_usd).toBe(5);
      const list = await api(gw, 'GET', '/v1/tasks', { key });
      expect(list.body.pagination.total).toBe(0);
      await Bun.sleep(500);
      expect(rx.requests).toHaveLength(0);
    } finally {
      rx.stop();
    }
  });
});

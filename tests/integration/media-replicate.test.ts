import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, createAccount, uniqueEmail } from '../helpers/api.ts';
import {
  FAKE_REPLICATE_SECRET,
  FAKE_REPLICATE_TOKEN,
  HOSTILE_ERROR,
  startFakeReplicate,
  type FakeReplicate,
} from '../helpers/fake-replicate.ts';
import { freePort, MODES, startGateway, type GatewayProcess } from '../helpers/gateway-process.ts';

/**
 * Issue 7, `replicate` adapter: a gateway process driven over HTTP exactly as a client would,
 * against a fake Replicate on loopback (tests/helpers/fake-replicate.ts, documented shapes in
 * tests/fixtures/replicate). Outputs are checked byte for byte against what the fake served.
 */

const VERSION = '39ed52f2a78e934b3ba6e2a89f5b1c712de7dfea535525255b1aa35c5565e08b';

async function writeConfig(fake: FakeReplicate, deadPort: number): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'gw-replicate-'));
  const path = join(dir, 'gateway.yaml');
  const imageInput = `{ prompt: { type: string, required: true, max_length: 2000 }, num_outputs: { type: integer, min: 1, max: 4, default: 1 }, scenario: { type: string }, output_shape: { type: string, enum: [list, string, object] } }`;
  await writeFile(
    path,
    `providers:
  - id: rep
    kind: replicate
    base_url: ${fake.url}
    api_key: \${REPLICATE_API_TOKEN}
    max_retries: 1
    options: { poll_interval_ms: 100, max_poll_interval_ms: 300 }
  - id: rephook
    kind: replicate
    base_url: ${fake.url}
    api_key: \${REPLICATE_API_TOKEN}
    options: { webhooks: always, webhook_secret: "\${REPLICATE_WEBHOOK_SECRET}", poll_interval_ms: 100, webhook_poll_interval_ms: 30000 }
  - id: repsafety
    kind: replicate
    base_url: ${fake.url}
    api_key: \${REPLICATE_API_TOKEN}
    options: { webhooks: always, webhook_secret: "\${REPLICATE_WEBHOOK_SECRET}", webhook_poll_interval_ms: 200 }
  - id: repdown
    kind: replicate
    base_url: http://127.0.0.1:${deadPort}/v1
    api_key: \${REPLICATE_API_TOKEN}
    max_retries: 0
    timeout_ms: 500
  - id: repnokey
    kind: replicate
    api_key: \${REPLICATE_TOKEN_NOT_SET}
models:
  - id: rep/flux
    category: image
    display_name: FLUX schnell
    upstream_model: black-forest-labs/flux-schnell
    pricing: { per_image: 0.003 }
    options: { count_field: num_outputs, input: ${imageInput} }
  - id: rep/sdxl
    category: image
    display_name: SDXL pinned
    upstream_model: stability-ai/sdxl:${VERSION}
    pricing: { per_request: 0.01 }
  - id: rep/slow-video
    category: video
    display_name: Slow video
    upstream_model: acme/slow-video
    pricing: { per_second: 0.1 }
    options: { deadline_ms: 1500, duration_field: duration, default_seconds: 5 }
  - id: rephook/flux
    category: image
    display_name: FLUX via webhooks
    upstream_model: black-forest-labs/flux-schnell
    pricing: { per_image: 0.003 }
    options: { count_field: num_outputs, input: ${imageInput} }
  - id: repsafety/flux
    category: image
    display_name: FLUX, webhook and a fast safety-net poll
    upstream_model: black-forest-labs/flux-schnell
    pricing: { per_request: 0.002 }
  - id: repdown/flux
    category: image
    display_name: unreachable
    upstream_model: black-forest-labs/flux-schnell
    pricing: { per_request: 0.002 }
  - id: repnokey/flux
    category: image
    display_name: no credentials
    upstream_model: black-forest-labs/flux-schnell
    pricing: { per_request: 0.002 }
`,
  );
  return path;
}

for (const mode of MODES) {
  describe(`replicate adapter [${mode.name}]`, () => {
    let fake: FakeReplicate;
    let gw: GatewayProcess;
    let key: string;
    const callbacks: any[] = [];
    let receiver: ReturnType<typeof Bun.serve>;
    let callbackUrl: string;

    const create = async (model: string, input: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
      const res = await api(gw, 'POST', '/v1/tasks', { key, body: { model, input, ...extra } });
      expect(res.status).toBe(200);
      return res.body.data.task_id as string;
    };
    const getTask = async (id: string) => (await api(gw, 'GET', `/v1/tasks/${id}`, { key })).body.data;
    const settle = async (id: string, timeoutMs = 15_000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const task = await getTask(id);
        if (task.status !== 'processing' || Date.now() > deadline) return task;
        await Bun.sleep(50);
      }
    };
    const bytesOf = async (url: string) => new Uint8Array(await (await fetch(url)).arrayBuffer());
    const expectSameBytes = async (storedUrl: string, fileName: string) => {
      expect(storedUrl.startsWith(gw.url)).toBe(true);
      const served = fake.files.get(fileName);
      expect(served).toBeDefined();
      expect(Buffer.from(await bytesOf(storedUrl)).equals(Buffer.from(served!))).toBe(true);
    };
    const balance = async () => (await api(gw, 'GET', '/v1/account', { key })).body.data.balance_usd as number;

    beforeAll(async () => {
      fake = await startFakeReplicate();
      receiver = Bun.serve({
        port: 0,
        hostname: '127.0.0.1',
        async fetch(req) {
          callbacks.push(await req.json());
          return new Response('ok');
        },
      });
      callbackUrl = `http://127.0.0.1:${receiver.port}/hook`;
      const config = await writeConfig(fake, await freePort());
      gw = await startGateway({
        ...(await mode.env('replicate')),
        GATEWAY_CONFIG: config,
        ALLOW_PRIVATE_URLS: 'true',
        RATE_LIMIT_PER_MINUTE: '100000',
        REPLICATE_API_TOKEN: FAKE_REPLICATE_TOKEN,
        REPLICATE_WEBHOOK_SECRET: FAKE_REPLICATE_SECRET,
      });
      ({ key } = await createAccount(gw, uniqueEmail('replicate'), 20));
    }, 40_000);
    afterAll(async () => {
      await gw?.stop();
      fake?.stop();
      receiver?.stop(true);
    });

    test('an official model: documented create request, polled to success, output copied byte for byte', async () => {
      const prompt = `fox ${mode.name} ${Date.now()}`;
      const before = await balance();
      const id = await create('rep/flux', { prompt });
      const task = await settle(id);
      expect(task).toMatchObject({ status: 'completed', model: 'rep/flux', cost: 0.003 });
      const p = fake.byPrompt(prompt)!;
      const createReq = fake.requests.find((r) => r.method === 'POST' && r.body?.input?.prompt === prompt)!;
      expect(createReq.path).toBe('/v1/models/black-forest-labs/flux-schnell/predictions');
      expect(createReq.headers.authorization).toBe(`Bearer ${FAKE_REPLICATE_TOKEN}`);
      expect(createReq.headers.prefer).toBeUndefined();
      // Polling mode (PUBLIC_URL is loopback and webhooks are `auto`): no webhook is asked for.
      expect(createReq.body).toEqual({ input: { prompt, num_outputs: 1 } });
      expect(
        fake.requests.filter((r) => r.method === 'GET' && r.path === `/v1/predictions/${p.id}`).length,
      ).toBeGreaterThanOrEqual(2);
      expect(Object.keys(task.output)).toEqual(['image_url']);
      await expectSameBytes(task.output.image_url, p.files[0]!);
      expect(await balance()).toBeCloseTo(before - 0.003, 6);
    });

    test('a pinned version goes to POST /predictions with the version id; a bare-URL and an object output both work', async () => {
      const a = `version ${Date.now()}`;
      const id = await create('rep/sdxl', { prompt: a, output_shape: 'string' });
      const task = await settle(id);
      expect(task.status).toBe('completed');
      const req = fake.requests.find((r) => r.method === 'POST' && r.body?.input?.prompt === a)!;
      expect(req.path).toBe('/v1/predictions');
      expect(req.body.version).toBe(VERSION);
      await expectSameBytes(task.output.image_url, fake.byPrompt(a)!.files[0]!);

      const b = `object ${Date.now()}`;
      const t2 = await settle(await create('rep/flux', { prompt: b, output_shape: 'object' }));
      expect(t2.status).toBe('completed');
      await expectSameBytes(t2.output.image_url, fake.byPrompt(b)!.files[0]!);
    });

    test('several outputs become image_urls, each stored byte for byte; fewer than asked refunds the rest', async () => {
      const prompt = `three ${Date.now()}`;
      const task = await settle(await create('rep/flux', { prompt, num_outputs: 3 }));
      expect(task.status).toBe('completed');
      expect(task.cost).toBeCloseTo(0.009, 9);
      const p = fake.byPrompt(prompt)!;
      expect(task.output.image_urls).toHaveLength(3);
      expect(task.output.image_url).toBe(task.output.image_urls[0]);
      for (let i = 0; i < 3; i++) await expectSameBytes(task.output.image_urls[i], p.files[i]!);

      const fewer = `fewer ${Date.now()}`;
      const before = await balance();
      const t2 = await settle(await create('rep/flux', { prompt: fewer, num_outputs: 4, scenario: 'fewer' }));
      expect(t2.status).toBe('completed');
      expect(t2.output.image_urls).toHaveLength(3);
      expect(t2.cost).toBeCloseTo(0.009, 9);
      expect(await balance()).toBeCloseTo(before - 0.009, 6);
    });

    test('input is checked against the config schema before anything reaches Replicate (422 naming the field)', async () => {
      const res = await api(gw, 'POST', '/v1/tasks', {
        key,
        body: { model: 'rep/flux', input: { prompt: 'x', num_outputs: 9 } },
      });
      expect(res.status).toBe(422);
      expect(JSON.stringify(res.body)).toContain('input.num_outputs');
      const dry = await api(gw, 'POST', '/v1/tasks', {
        key,
        body: { model: 'rep/slow-video', input: { prompt: 'x', duration: 8 }, dry_run: true },
      });
      expect(dry.status).toBe(200);
      expect(dry.body.data.cost).toBeCloseTo(0.8, 9);
    });

    test('a failed prediction fails the task with the upstream error text and refunds it', async () => {
      const prompt = `fail ${Date.now()}`;
      const before = await balance();
      const task = await settle(await create('rep/flux', { prompt, scenario: 'fail' }));
      expect(task.status).toBe('failed');
      expect(task.error_message).toContain('CUDA out of memory');
      expect(await balance()).toBeCloseTo(before, 6);

      const canceled = await settle(
        await create('rep/flux', { prompt: `canceled ${Date.now()}`, scenario: 'canceled' }),
      );
      expect(canceled.status).toBe('failed');
      expect(canceled.error_message).toContain('canceled');
    });

    test('a 4xx from Replicate fails the task with its message', async () => {
      const task = await settle(await create('rep/flux', { prompt: `bad ${Date.now()}`, scenario: 'bad-input' }));
      expect(task.status).toBe('failed');
      expect(task.error_message).toContain('Must be less than or equal to 4');
    });

    test('an answer the gateway cannot store or walk fails the task at once and refunds it, never retried to its deadline', async () => {
      // Error text Postgres cannot hold (a NUL, half a surrogate pair): stored with U+FFFD instead.
      const before = await balance();
      const hostile = await settle(
        await create(
          'rep/flux',
          { prompt: `hostile ${Date.now()}`, scenario: 'hostile-error' },
          { callback_url: callbackUrl },
        ),
      );
      expect(hostile.status).toBe('failed');
      expect(hostile.error_message).toBe(
        `replicate: ${HOSTILE_ERROR.replace('\u0000', '\uFFFD').replace('\ud800', '\uFFFD')}`,
      );
      // A file URL nested deeper than any walk goes: a broken answer, not a transient one.
      const deepPrompt = `deep ${Date.now()}`;
      const deep = await settle(await create('rep/flux', { prompt: deepPrompt, scenario: 'deep-output' }));
      expect(deep.status).toBe('failed');
      expect(deep.error_message).toContain('nested deeper than');
      expect(fake.byPrompt(deepPrompt)!.polls).toBe(2);
      expect(await balance()).toBeCloseTo(before, 6);
      // The failed task's callback carries the same stored text.
      const deadline = Date.now() + 10_000;
      while (!callbacks.some((c) => c.task_id === hostile.task_id) && Date.now() < deadline) await Bun.sleep(50);
      expect(callbacks.find((c) => c.task_id === hostile.task_id)?.error_message).toBe(hostile.error_message);
    });

    test('past its deadline a prediction is cancelled upstream and the task fails', async () => {
      const prompt = `slow ${Date.now()}`;
      const task = await settle(await create('rep/slow-video', { prompt, scenario: 'never' }), 15_000);
      expect(task.status).toBe('failed');
      expect(task.error_message).toContain('did not finish in time');
      const p = fake.byPrompt(prompt)!;
      expect(p.cancelRequests).toBeGreaterThanOrEqual(1);
      const cancel = fake.requests.find((r) => r.method === 'POST' && r.path === `/v1/predictions/${p.id}/cancel`)!;
      expect(cancel.headers.authorization).toBe(`Bearer ${FAKE_REPLICATE_TOKEN}`);
      expect(p.status).toBe('canceled');
    });

    test('429 with Retry-After is waited out on create and on poll; a 5xx poll is retried', async () => {
      const prompt = `throttled ${Date.now()}`;
      const task = await settle(await create('rep/flux', { prompt, scenario: 'create-429' }));
      expect(task.status).toBe('completed');
      const creates = fake.requests.filter((r) => r.method === 'POST' && r.body?.input?.prompt === prompt);
      expect(creates).toHaveLength(2);
      expect(creates[1]!.at - creates[0]!.at).toBeGreaterThanOrEqual(900);
      await expectSameBytes(task.output.image_url, fake.byPrompt(prompt)!.files[0]!);

      const polled = await settle(await create('rep/flux', { prompt: `poll429 ${Date.now()}`, scenario: 'poll-429' }));
      expect(polled.status).toBe('completed');
      const flaky = await settle(await create('rep/flux', { prompt: `poll500 ${Date.now()}`, scenario: 'poll-500' }));
      expect(flaky.status).toBe('completed');
    });

    test('webhook mode: Replicate is asked to call back, and its signed webhook finishes the task (no poll needed)', async () => {
      const prompt = `hook ${Date.now()}`;
      const id = await create(
        'rephook/flux',
        { prompt, scenario: 'webhook', num_outputs: 2 },
        { callback_url: callbackUrl },
      );
      const p = await fake.waitFor(prompt);
      expect(p.webhook).toBe(`${gw.url}/upstream-webhooks/rephook?task=${encodeURIComponent(id)}`);
      expect(p.webhookFilter).toEqual(['completed']);
      // Long enough for the runner's idle wait to grow past a second (claims that find nothing).
      await Bun.sleep(1_500);
      expect((await getTask(id)).status).toBe('processing');
      const sentAt = performance.now();
      const sent = await fake.finish(p.id);
      expect(sent?.status).toBe(200);
      const task = await settle(id, 5_000);
      expect(task.status).toBe('completed');
      // The stored result wakes the runner: finished at once, not at its next idle claim.
      expect(performance.now() - sentAt).toBeLessThan(800);
      expect(task.output.image_urls).toHaveLength(2);
      for (let i = 0; i < 2; i++) await expectSameBytes(task.output.image_urls[i], p.files[i]!);
      // Finished by the webhook: the 30 s safety-net poll never ran.
      expect(fake.requests.filter((r) => r.method === 'GET' && r.path === `/v1/predictions/${p.id}`)).toHaveLength(0);

      // Duplicates (Replicate retries, or replays) are accepted and change nothing.
      for (let i = 0; i < 3; i++) expect((await fake.sendWebhook(p.id)).status).toBe(200);
      await Bun.sleep(500);
      expect(callbacks.filter((c) => c.task_id === id)).toHaveLength(1);
      expect((await getTask(id)).output).toEqual(task.output);
    });

    test('a webhook with a bad signature is refused (401) and ignored; the genuine one still finishes the task', async () => {
      const prompt = `forged ${Date.now()}`;
      const id = await create('rephook/flux', { prompt, scenario: 'webhook' });
      const p = await fake.waitFor(prompt);
      await fake.finish(p.id, { sendWebhook: false });
      const forged = await fake.sendWebhook(p.id, { badSignature: true });
      expect(forged.status).toBe(401);
      const unsigned = await fetch(p.webhook!, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect(unsigned.status).toBe(401);
      await Bun.sleep(500);
      expect((await getTask(id)).status).toBe('processing');
      expect((await fake.sendWebhook(p.id)).status).toBe(200);
      expect((await settle(id, 5_000)).status).toBe('completed');
    });

    test('a webhook arriving while a poll is in flight is kept and finishes the task once', async () => {
      const prompt = `race ${Date.now()}`;
      const id = await create('repsafety/flux', { prompt, scenario: 'webhook' }, { callback_url: callbackUrl });
      const p = await fake.waitFor(prompt);
      const hold = fake.holdNextPoll(p.id);
      await hold.arrived; // the gateway's safety-net poll is now waiting on the fake
      await fake.finish(p.id, { sendWebhook: false });
      const webhook = fake.sendWebhook(p.id);
      await Bun.sleep(300);
      hold.release('processing'); // the in-flight poll still saw the old state
      const answered = await webhook;
      expect(answered.status).toBe(200);
      // Stored once the poll handed the task back, not lost under the poll's own write.
      expect(JSON.parse(answered.body).data.outcome).toBe('stored');
      const task = await settle(id, 5_000);
      expect(task.status).toBe('completed');
      await expectSameBytes(task.output.image_url, p.files[0]!);
      await Bun.sleep(500);
      expect(callbacks.filter((c) => c.task_id === id)).toHaveLength(1);
    });

    test('webhook and poll both seeing the end finish the task once', async () => {
      const prompt = `both ${Date.now()}`;
      const id = await create('repsafety/flux', { prompt, scenario: 'webhook' }, { callback_url: callbackUrl });
      const p = await fake.waitFor(prompt);
      const hold = fake.holdNextPoll(p.id);
      await hold.arrived;
      await fake.finish(p.id, { sendWebhook: false });
      const webhook = fake.sendWebhook(p.id);
      hold.release('succeeded');
      const second = fake.sendWebhook(p.id);
      for (const answered of [await webhook, await second]) {
        expect(answered.status).toBe(200);
        // The poll step finished the task; the webhooks found it finished and changed nothing.
        expect(JSON.parse(answered.body).data.outcome).toBe('finished');
      }
      const task = await settle(id, 5_000);
      expect(task.status).toBe('completed');
      await expectSameBytes(task.output.image_url, p.files[0]!);
      await Bun.sleep(700);
      expect(callbacks.filter((c) => c.task_id === id)).toHaveLength(1);
      const ledger = await api(gw, 'GET', `/v1/tasks/${id}`, { key });
      expect(ledger.body.data.cost).toBeCloseTo(0.002, 9);
    });

    test('a provider without credentials is hidden (422 unknown model); /readyz names it and a failing one', async () => {
      const models = await api(gw, 'GET', '/v1/models', { key });
      const ids = (models.body.data as any[]).map((m) => m.id);
      expect(ids).toContain('rep/flux');
      expect(ids).not.toContain('repnokey/flux');
      const res = await api(gw, 'POST', '/v1/tasks', { key, body: { model: 'repnokey/flux', input: { prompt: 'x' } } });
      expect(res.status).toBe(422);
      expect(JSON.stringify(res.body)).toContain('unknown model');

      // The unreachable one fails every call; after five in a row it counts as failing.
      await Promise.all(Array.from({ length: 5 }, (_, i) => create('repdown/flux', { prompt: `down ${i}` })));
      const deadline = Date.now() + 20_000;
      let ready: any;
      for (;;) {
        ready = await api(gw, 'GET', '/readyz');
        if (String(ready.body.providers?.repdown).startsWith('failing') || Date.now() > deadline) break;
        await Bun.sleep(250);
      }
      expect(ready.status).toBe(200);
      expect(ready.body.status).toBe('ready');
      expect(ready.body.providers.rep).toBe('ok');
      expect(ready.body.providers.repnokey).toBe('unconfigured: missing REPLICATE_TOKEN_NOT_SET');
      expect(ready.body.providers.repdown).toMatch(
        /^failing: \d+ consecutive upstream errors, last: upstream unreachable/,
      );
    }, 30_000);
  });
}

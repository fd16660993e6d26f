import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, createAccount, uniqueEmail } from '../helpers/api.ts';
import { FAKE_FAL_KEY, startFakeFal, type FakeFal } from '../helpers/fake-fal.ts';
import { MODES, startGateway, type GatewayProcess } from '../helpers/gateway-process.ts';

/**
 * Issue 7, `fal` adapter: a gateway process driven over HTTP as a client would, against a fake
 * fal queue on loopback (tests/helpers/fake-fal.ts, documented shapes in tests/fixtures/fal).
 * Outputs are checked byte for byte against what the fake served.
 */

async function writeConfig(fake: FakeFal): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'gw-fal-'));
  const path = join(dir, 'gateway.yaml');
  await writeFile(
    path,
    `providers:
  - id: fal
    kind: fal
    base_url: ${fake.url}
    api_key: "\${FAL_KEY}"
    max_retries: 1
    options: { poll_interval_ms: 100, max_poll_interval_ms: 300 }
  - id: falnokey
    kind: fal
    api_key: "\${FAL_KEY_NOT_SET}"
models:
  - id: fal/flux-dev
    category: image
    display_name: FLUX dev
    upstream_model: fal-ai/flux/dev
    pricing: { per_image: 0.025 }
    options:
      count_field: num_images
      input_map: { size: image_size }
      input:
        prompt: { type: string, required: true }
        num_images: { type: integer, min: 1, max: 4, default: 1 }
        size: { type: string, enum: [square_hd, landscape_4_3] }
        scenario: { type: string }
  - id: fal/kling
    category: video
    display_name: Kling
    upstream_model: fal-ai/kling-video/v1/standard/text-to-video
    pricing: { per_second: 0.05 }
    options: { duration_field: duration, default_seconds: 5, deadline_ms: 1500 }
  - id: falnokey/flux
    category: image
    display_name: no key
    upstream_model: fal-ai/flux/dev
    pricing: { per_image: 0.025 }
`,
  );
  return path;
}

for (const mode of MODES) {
  describe(`fal adapter [${mode.name}]`, () => {
    let fake: FakeFal;
    let gw: GatewayProcess;
    let key: string;

    const create = async (model: string, input: Record<string, unknown>) => {
      const res = await api(gw, 'POST', '/v1/tasks', { key, body: { model, input } });
      expect(res.status).toBe(200);
      return res.body.data.task_id as string;
    };
    const settle = async (id: string, timeoutMs = 15_000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const task = (await api(gw, 'GET', `/v1/tasks/${id}`, { key })).body.data;
        if (task.status !== 'processing' || Date.now() > deadline) return task;
        await Bun.sleep(50);
      }
    };
    const expectSameBytes = async (storedUrl: string, fileName: string) => {
      expect(storedUrl.startsWith(gw.url)).toBe(true);
      const stored = new Uint8Array(await (await fetch(storedUrl)).arrayBuffer());
      expect(Buffer.from(stored).equals(Buffer.from(fake.files.get(fileName)!))).toBe(true);
    };
    const balance = async () => (await api(gw, 'GET', '/v1/account', { key })).body.data.balance_usd as number;

    beforeAll(async () => {
      fake = await startFakeFal({ videoModels: ['fal-ai/kling-video/v1/standard/text-to-video'] });
      gw = await startGateway({
        ...(await mode.env('fal')),
        GATEWAY_CONFIG: await writeConfig(fake),
        ALLOW_PRIVATE_URLS: 'true',
        RATE_LIMIT_PER_MINUTE: '100000',
        FAL_KEY: FAKE_FAL_KEY,
      });
      ({ key } = await createAccount(gw, uniqueEmail('fal'), 20));
    }, 40_000);
    afterAll(async () => {
      await gw?.stop();
      fake?.stop();
    });

    test('submit, status and result as documented; renamed input; output copied byte for byte', async () => {
      const prompt = `fal fox ${Date.now()}`;
      const task = await settle(await create('fal/flux-dev', { prompt, size: 'square_hd' }));
      expect(task).toMatchObject({ status: 'completed', cost: 0.025 });
      const job = fake.byPrompt(prompt)!;
      const submit = fake.requests.find((r) => r.method === 'POST' && r.body?.prompt === prompt)!;
      expect(submit.path).toBe('/fal-ai/flux/dev');
      expect(submit.headers.authorization).toBe(`Key ${FAKE_FAL_KEY}`);
      expect(submit.body).toEqual({ prompt, num_images: 1, image_size: 'square_hd' });
      // Status and result under the app id, without the model's `/dev` subpath.
      const statuses = fake.requests.filter((r) => r.path === `/fal-ai/flux/requests/${job.id}/status`);
      expect(statuses.length).toBe(3);
      expect(
        fake.requests.filter((r) => r.method === 'GET' && r.path === `/fal-ai/flux/requests/${job.id}`),
      ).toHaveLength(1);
      await expectSameBytes(task.output.image_url, job.files[0]!);
    });

    test('an input that prices a task beyond what a task may cost is a 422 naming input, and moves nothing', async () => {
      const before = await balance();
      // A 1e300-second video was a 500; "1e30" as text was admitted and charged $5.
      for (const duration of [1e300, '1e30', 5e28]) {
        for (const dry_run of [false, true]) {
          const res = await api(gw, 'POST', '/v1/tasks', {
            key,
            body: { model: 'fal/kling', input: { prompt: 'long', duration }, ...(dry_run ? { dry_run } : {}) },
          });
          expect(res.status).toBe(422);
          expect(res.body.data.message).toStartWith('input: prices the task above the most a task may cost');
        }
      }
      expect(await balance()).toBe(before);
      // A price within reach is charged as before.
      const dry = await api(gw, 'POST', '/v1/tasks', {
        key,
        body: { model: 'fal/kling', input: { prompt: 'long', duration: '12' }, dry_run: true },
      });
      expect(dry.body.data.cost).toBeCloseTo(0.6, 10);
    });

    test('several images become image_urls, each byte for byte; a video model yields video_url', async () => {
      const prompt = `fal three ${Date.now()}`;
      const task = await settle(await create('fal/flux-dev', { prompt, num_images: 3 }));
      expect(task.status).toBe('completed');
      expect(task.cost).toBeCloseTo(0.075, 9);
      const job = fake.byPrompt(prompt)!;
      expect(task.output.image_urls).toHaveLength(3);
      for (let i = 0; i < 3; i++) await expectSameBytes(task.output.image_urls[i], job.files[i]!);

      const v = `fal video ${Date.now()}`;
      const video = await settle(await create('fal/kling', { prompt: v, duration: 10 }));
      expect(video.status).toBe('completed');
      expect(video.cost).toBeCloseTo(0.5, 9);
      expect(Object.keys(video.output)).toEqual(['video_url']);
      await expectSameBytes(video.output.video_url, fake.byPrompt(v)!.files[0]!);
    });

    test('a model error, a request error and an error in the status each fail the task with fal’s text, refunded', async () => {
      const before = await balance();
      const model = await settle(
        await create('fal/flux-dev', { prompt: `fal m ${Date.now()}`, scenario: 'model-error' }),
      );
      expect(model.status).toBe('failed');
      expect(model.error_message).toContain('flagged by a content checker');
      const request = await settle(
        await create('fal/flux-dev', { prompt: `fal r ${Date.now()}`, scenario: 'request-error' }),
      );
      expect(request.status).toBe('failed');
      expect(request.error_message).toContain('Request timed out');
      const status = await settle(
        await create('fal/flux-dev', { prompt: `fal s ${Date.now()}`, scenario: 'status-error' }),
      );
      expect(status.status).toBe('failed');
      expect(status.error_message).toContain('Internal error while running the model');
      expect(await balance()).toBeCloseTo(before, 6);
    });

    test('past the deadline the request is cancelled with PUT cancel_url and the task fails', async () => {
      const prompt = `fal slow ${Date.now()}`;
      const task = await settle(await create('fal/kling', { prompt, scenario: 'never' }));
      expect(task.status).toBe('failed');
      expect(task.error_message).toContain('did not finish in time');
      const job = fake.byPrompt(prompt)!;
      expect(job.cancelRequests).toBe(1);
      const cancel = fake.requests.find(
        (r) => r.method === 'PUT' && r.path === `/fal-ai/kling-video/requests/${job.id}/cancel`,
      )!;
      expect(cancel.headers.authorization).toBe(`Key ${FAKE_FAL_KEY}`);
    });

    test('429 with Retry-After on submit is waited out; a bare 503 on status is retried', async () => {
      const prompt = `fal throttled ${Date.now()}`;
      const task = await settle(await create('fal/flux-dev', { prompt, scenario: 'submit-429' }));
      expect(task.status).toBe('completed');
      const submits = fake.requests.filter((r) => r.method === 'POST' && r.body?.prompt === prompt);
      expect(submits).toHaveLength(2);
      expect(submits[1]!.at - submits[0]!.at).toBeGreaterThanOrEqual(900);
      await expectSameBytes(task.output.image_url, fake.byPrompt(prompt)!.files[0]!);

      const flaky = `fal 503 ${Date.now()}`;
      const t2 = await settle(await create('fal/flux-dev', { prompt: flaky, scenario: 'status-503' }));
      expect(t2.status).toBe('completed');
    });

    test('without FAL credentials the models are hidden and /readyz says why', async () => {
      const ids = ((await api(gw, 'GET', '/v1/models', { key })).body.data as any[]).map((m) => m.id);
      expect(ids).toContain('fal/flux-dev');
      expect(ids).not.toContain('falnokey/flux');
      expect(
        (await api(gw, 'POST', '/v1/tasks', { key, body: { model: 'falnokey/flux', input: { prompt: 'x' } } })).status,
      ).toBe(422);
      const ready = await api(gw, 'GET', '/readyz');
      expect(ready.status).toBe(200);
      expect(ready.body.providers).toEqual({ fal: 'ok', falnokey: 'unconfigured: missing FAL_KEY_NOT_SET' });
    });
  });
}

for (const mode of MODES) {
  describe(`fal adapter across a restart [${mode.name}]`, () => {
    test('a gateway stopped while a submit is answered keeps the job’s id: the next one polls it, never submits again', async () => {
      const fake = await startFakeFal();
      const env = {
        ...(await mode.env('fal-restart')),
        GATEWAY_CONFIG: await writeConfig(fake),
        ALLOW_PRIVATE_URLS: 'true',
        FAL_KEY: FAKE_FAL_KEY,
      };
      let gw = await startGateway(env);
      try {
        const { key } = await createAccount(gw, uniqueEmail('fal-restart'), 5);
        const prompt = `fal restart ${Date.now()}`;
        const created = await api(gw, 'POST', '/v1/tasks', {
          key,
          body: { model: 'fal/flux-dev', input: { prompt, scenario: 'slow-submit' } },
        });
        expect(created.status).toBe(200);
        // The submit has reached fal (its job exists) and is not answered yet: stop the gateway.
        for (let i = 0; i < 100 && !fake.byPrompt(prompt); i++) await Bun.sleep(20);
        expect(fake.byPrompt(prompt)).toBeDefined();
        expect(await gw.stop('SIGTERM')).toBe(0);
        gw = await startGateway(env);
        let task: any;
        for (let i = 0; i < 150; i++) {
          task = (await api(gw, 'GET', `/v1/tasks/${created.body.data.task_id}`, { key })).body.data;
          if (task.status !== 'processing') break;
          await Bun.sleep(100);
        }
        expect(task.status).toBe('completed');
        // One job at fal: before, the stop aborted the submit and the next gateway submitted again.
        const submits = fake.requests.filter((r) => r.method === 'POST' && r.body?.prompt === prompt);
        expect(submits).toHaveLength(1);
      } finally {
        await gw.stop();
        fake.stop();
      }
    }, 60_000);
  });
}

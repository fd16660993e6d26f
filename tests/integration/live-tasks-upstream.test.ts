import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, createAccount, uniqueEmail } from '../helpers/api.ts';
import { FAKE_FAL_KEY, startFakeFal, type FakeFal } from '../helpers/fake-fal.ts';
import { FAKE_REPLICATE_TOKEN, startFakeReplicate, type FakeReplicate } from '../helpers/fake-replicate.ts';
import { MODES, startGateway, type GatewayProcess } from '../helpers/gateway-process.ts';

/**
 * Cancelling a task whose job runs upstream: the gateway asks the upstream to cancel it
 * (Replicate's `POST /v1/predictions/{id}/cancel`, against the fake Replicate on loopback),
 * refunds the task and never polls it again.
 */
async function writeConfig(fake: FakeReplicate, slowUrl: string, fal: FakeFal): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'gw-live-upstream-'));
  const path = join(dir, 'gateway.yaml');
  await writeFile(
    path,
    `providers:
  - id: rep
    kind: replicate
    base_url: ${fake.url}
    api_key: \${REPLICATE_API_TOKEN}
    options: { poll_interval_ms: 100, max_poll_interval_ms: 200 }
  - id: repslow
    kind: replicate
    base_url: ${slowUrl}
    api_key: \${REPLICATE_API_TOKEN}
    options: { poll_interval_ms: 100, max_poll_interval_ms: 200 }
  - id: fal
    kind: fal
    base_url: ${fal.url}
    api_key: "\${FAL_KEY}"
    options: { poll_interval_ms: 100, max_poll_interval_ms: 200 }
models:
  - id: fal/flux-dev
    category: image
    display_name: FLUX dev
    upstream_model: fal-ai/flux/dev
    pricing: { per_request: 0.2 }
    options: { input: { prompt: { type: string, required: true }, scenario: { type: string } } }
  - id: repslow/flux
    category: image
    display_name: FLUX schnell, slow to submit
    upstream_model: black-forest-labs/flux-schnell
    pricing: { per_request: 0.25 }
    options: { input: { prompt: { type: string, required: true }, scenario: { type: string } } }
  - id: rep/flux
    category: image
    display_name: FLUX schnell
    upstream_model: black-forest-labs/flux-schnell
    pricing: { per_request: 0.25 }
    options: { input: { prompt: { type: string, required: true }, scenario: { type: string } } }
`,
  );
  return path;
}

const mode = MODES[0]!;
describe(`cancelling an upstream job [${mode.name}]`, () => {
  let fake: FakeReplicate;
  let fal: FakeFal;
  let gw: GatewayProcess;
  let slow: ReturnType<typeof Bun.serve>;
  /** Resolvers of the test waiting for a create to reach the slow proxy. */
  const createArrived: Array<() => void> = [];

  beforeAll(async () => {
    fake = await startFakeReplicate();
    fal = await startFakeFal();
    // In front of the fake: creates take 1.5 s to be forwarded, so a cancel can land while one is in flight.
    slow = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      async fetch(req) {
        const url = new URL(req.url);
        const body = req.method === 'GET' ? undefined : await req.text();
        if (req.method === 'POST' && !url.pathname.endsWith('/cancel')) {
          for (const arrived of createArrived.splice(0)) arrived();
          await Bun.sleep(1500);
        }
        const headers = new Headers(req.headers);
        headers.delete('host');
        headers.delete('content-length');
        const res = await fetch(`${fake.origin}${url.pathname}${url.search}`, { method: req.method, headers, body });
        return new Response(await res.text(), {
          status: res.status,
          headers: { 'content-type': res.headers.get('content-type') ?? 'application/json' },
        });
      },
    });
    gw = await startGateway({
      ...(await mode.env('liveupstream')),
      GATEWAY_CONFIG: await writeConfig(fake, `http://127.0.0.1:${slow.port}/v1`, fal),
      FAL_KEY: FAKE_FAL_KEY,
      REPLICATE_API_TOKEN: FAKE_REPLICATE_TOKEN,
    });
  }, 40_000);
  afterAll(async () => {
    await gw?.stop();
    slow?.stop(true);
    fake?.stop();
    fal?.stop();
  });

  test('replicate: the prediction is cancelled upstream, the task refunded and no longer polled', async () => {
    const { key } = await createAccount(gw, uniqueEmail('rep-cancel'), 1);
    const prompt = `never ends ${Date.now()}`;
    const created = await api(gw, 'POST', '/v1/tasks', {
      key,
      body: { model: 'rep/flux', input: { prompt, scenario: 'never' } },
    });
    expect(created.status).toBe(200);
    const id = created.body.data.task_id as string;
    const prediction = await fake.waitFor(prompt);
    // Polled at least once: the prediction's id is stored on the task.
    for (let i = 0; i < 100 && prediction.polls < 1; i++) await Bun.sleep(50);
    expect(prediction.polls).toBeGreaterThan(0);
    expect((await api(gw, 'GET', '/v1/account', { key })).body.data.balance_usd).toBe(0.75);

    const res = await api(gw, 'POST', `/v1/tasks/${id}/cancel`, { key });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-gateway-warnings')).toBeNull();
    expect(res.body.data).toMatchObject({ status: 'cancelled', cost: 0 });
    expect(prediction.cancelRequests).toBe(1);
    expect(prediction.status).toBe('canceled');
    expect((await api(gw, 'GET', '/v1/account', { key })).body.data.balance_usd).toBe(1);

    const polls = prediction.polls;
    await Bun.sleep(600);
    expect(prediction.polls).toBe(polls);
    expect((await api(gw, 'GET', `/v1/tasks/${id}`, { key })).body.data.status).toBe('cancelled');
  }, 30_000);

  test('replicate, cancelled while the prediction is being created: cancelled upstream once the create returns', async () => {
    const { key } = await createAccount(gw, uniqueEmail('rep-cancel-inflight'), 1);
    const prompt = `cancelled in flight ${Date.now()}`;
    const arrived = new Promise<void>((resolve) => createArrived.push(resolve));
    const created = await api(gw, 'POST', '/v1/tasks', {
      key,
      body: { model: 'repslow/flux', input: { prompt, scenario: 'never' } },
    });
    const id = created.body.data.task_id as string;
    await arrived;
    const res = await api(gw, 'POST', `/v1/tasks/${id}/cancel`, { key });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ status: 'cancelled', cost: 0 });
    const warnings = JSON.parse(res.headers.get('x-gateway-warnings') ?? '[]');
    expect(warnings).toEqual([{ type: 'other', field: 'upstream', message: expect.stringContaining('in flight') }]);
    expect((await api(gw, 'GET', '/v1/account', { key })).body.data.balance_usd).toBe(1);

    // The create returns, the handle is stored, and the job is cancelled upstream; it is never polled.
    const prediction = await fake.waitFor(prompt, 10_000);
    for (let i = 0; i < 100 && prediction.cancelRequests < 1; i++) await Bun.sleep(50);
    expect(prediction.cancelRequests).toBe(1);
    expect(prediction.status).toBe('canceled');
    await Bun.sleep(500);
    expect(prediction.polls).toBe(0);
    expect((await api(gw, 'GET', `/v1/tasks/${id}`, { key })).body.data.status).toBe('cancelled');
  }, 30_000);

  test('fal: the queued request is cancelled upstream and the task refunded', async () => {
    const { key } = await createAccount(gw, uniqueEmail('fal-cancel'), 1);
    const prompt = `fal never ends ${Date.now()}`;
    const created = await api(gw, 'POST', '/v1/tasks', {
      key,
      body: { model: 'fal/flux-dev', input: { prompt, scenario: 'never' } },
    });
    expect(created.status).toBe(200);
    const id = created.body.data.task_id as string;
    let job = fal.byPrompt(prompt);
    for (let i = 0; i < 100 && (job?.statusPolls ?? 0) < 1; i++) {
      await Bun.sleep(50);
      job = fal.byPrompt(prompt);
    }
    expect(job?.statusPolls).toBeGreaterThan(0);
    const res = await api(gw, 'POST', `/v1/tasks/${id}/cancel`, { key });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-gateway-warnings')).toBeNull();
    expect(job?.cancelRequests).toBe(1);
    expect((await api(gw, 'GET', '/v1/account', { key })).body.data.balance_usd).toBe(1);
    expect((await api(gw, 'GET', `/v1/tasks/${id}`, { key })).body.data).toMatchObject({
      status: 'cancelled',
      cost: 0,
    });
  }, 30_000);
});

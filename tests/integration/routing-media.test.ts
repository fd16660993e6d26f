import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, createAccount, uniqueEmail } from '../helpers/api.ts';
import { startFakeOpenAIMedia, type FakeOpenAIMedia } from '../helpers/fake-openai-media.ts';
import { MODES, startGateway, type GatewayProcess } from '../helpers/gateway-process.ts';
import { sandboxSpeech } from '../../providers/sandbox/media/index.ts';
import { SANDBOX_SPEECH_VOICE_IDS } from '../../providers/sandbox/resources/speech-voices.ts';

/**
 * Media task fallbacks (docs/routing.md): a job the upstream fails or refuses moves to the next
 * fallback model, the task is re-priced to the model that served (the difference charged or
 * refunded in the ledger), and the record lists the attempts.
 */

const SANDBOX_PER_IMAGE = 0.01;
const OAI_PER_IMAGE = 0.04;

async function settle(gw: GatewayProcess, key: string, id: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await api(gw, 'GET', `/v1/tasks/${id}`, { key });
    expect(res.status).toBe(200);
    if (res.body.data.status !== 'processing' || Date.now() > deadline) return res.body.data;
    await Bun.sleep(50);
  }
}

const balance = async (gw: GatewayProcess, key: string) =>
  (await api(gw, 'GET', '/v1/account', { key })).body.data.balance_usd as number;

for (const mode of MODES) {
  describe(`media fallbacks (${mode.name})`, () => {
    let fake: FakeOpenAIMedia;
    let gw: GatewayProcess;
    let samples: ReturnType<typeof Bun.serve>;
    beforeAll(async () => {
      fake = await startFakeOpenAIMedia();
      // A recording to make a custom voice from (samples are fetched from a URL).
      const recording = sandboxSpeech('A recording of my own voice.') as Uint8Array<ArrayBuffer>;
      samples = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response(recording) });
      const dir = await mkdtemp(join(tmpdir(), 'gw-routing-media-'));
      const config = {
        providers: [
          { id: 'sandbox', kind: 'sandbox' },
          { id: 'sb2', kind: 'sandbox' },
          { id: 'oai', kind: 'openai', base_url: fake.baseUrl, api_key: fake.apiKey, max_retries: 0 },
        ],
        models: [
          { id: 'sandbox/image', category: 'image', display_name: 'Sandbox', fallbacks: ['oai/gpt-image-1'] },
          {
            id: 'oai/gpt-image-1',
            category: 'image',
            upstream_model: 'gpt-image-1',
            display_name: 'GPT image',
            pricing: { per_image: OAI_PER_IMAGE },
            fallbacks: ['sb2/image'],
          },
          { id: 'sb2/image', category: 'image', upstream_model: 'image', display_name: 'Sandbox 2' },
          { id: 'oai/lonely', category: 'image', upstream_model: 'gpt-image-1', display_name: 'Lonely' },
          { id: 'sandbox/speech', category: 'audio', display_name: 'Speech', fallbacks: ['sb2/speech'] },
          { id: 'sb2/speech', category: 'audio', upstream_model: 'speech', display_name: 'Speech 2' },
        ],
      };
      const path = join(dir, 'gateway.json');
      await writeFile(path, JSON.stringify(config));
      gw = await startGateway({
        ...(await mode.env('routing-media')),
        GATEWAY_CONFIG: path,
        ALLOW_PRIVATE_URLS: 'true',
      });
    });
    afterAll(async () => {
      await gw?.stop();
      fake?.stop();
      samples?.stop(true);
    });

    test('a failed job falls back to a dearer model: the difference is charged and the attempts listed', async () => {
      const { key } = await createAccount(gw, uniqueEmail('media-fb'), 1);
      const res = await api(gw, 'POST', '/v1/tasks', {
        key,
        body: { model: 'sandbox/image', input: { prompt: 'a fox [fb-up]', fail: true, delay_ms: 0 } },
      });
      expect(res.status).toBe(200);
      const task = await settle(gw, key, res.body.data.task_id);
      expect(task.status).toBe('completed');
      expect(task.model).toBe('oai/gpt-image-1');
      expect(task.cost).toBeCloseTo(OAI_PER_IMAGE, 10);
      expect(task.attempts).toEqual([
        { model: 'sandbox/image', provider: 'sandbox', error: 'sandbox: simulated failure' },
      ]);
      expect(fake.find('[fb-up]')).toHaveLength(1);
      expect(await balance(gw, key)).toBeCloseTo(1 - OAI_PER_IMAGE, 10);
    });

    test("a key kept to some models never falls back to another: the task fails, refunded, the fallback listed as not the key's", async () => {
      const { key } = await createAccount(gw, uniqueEmail('media-kept'), 1);
      const made = await api(gw, 'POST', '/v1/keys', { key, body: { name: 'sandbox only', models: ['sandbox'] } });
      expect(made.status).toBe(200);
      const res = await api(gw, 'POST', '/v1/tasks', {
        key: made.body.data.key,
        body: { model: 'sandbox/image', input: { prompt: 'a fox [fb-kept]', fail: true, delay_ms: 0 } },
      });
      expect(res.status).toBe(200);
      const task = await settle(gw, key, res.body.data.task_id);
      expect(task.status).toBe('failed');
      expect(task.attempts).toEqual([
        { model: 'sandbox/image', provider: 'sandbox', error: 'sandbox: simulated failure' },
        { model: 'oai/gpt-image-1', provider: 'oai', error: 'not a model the API key that created the task may use' },
      ]);
      expect(fake.find('[fb-kept]')).toHaveLength(0);
      expect(await balance(gw, key)).toBeCloseTo(1, 10);
    });

    test("a dearer fallback counts against the key's budget: taken when it has room, skipped when not", async () => {
      const { key } = await createAccount(gw, uniqueEmail('media-budget'), 1);
      const spendOf = async (id: number) =>
        ((await api(gw, 'GET', '/v1/keys', { key })).body.data as Array<{ id: number; spend_usd: number }>).find(
          (k) => k.id === id,
        )?.spend_usd;
      const run = async (budget: number, marker: string) => {
        const made = await api(gw, 'POST', '/v1/keys', { key, body: { name: `budget ${budget}`, budget_usd: budget } });
        expect(made.status).toBe(200);
        const res = await api(gw, 'POST', '/v1/tasks', {
          key: made.body.data.key,
          body: { model: 'sandbox/image', input: { prompt: `a fox ${marker}`, fail: true, delay_ms: 0 } },
        });
        expect(res.status).toBe(200);
        return { task: await settle(gw, key, res.body.data.task_id), spend: await spendOf(made.body.data.id) };
      };
      // $0.05 holds the sandbox's $0.01 and the $0.03 more the fallback costs.
      const roomy = await run(0.05, '[fb-roomy]');
      expect(roomy.task.status).toBe('completed');
      expect(roomy.task.model).toBe('oai/gpt-image-1');
      expect(roomy.spend).toBeCloseTo(OAI_PER_IMAGE, 10);
      // $0.02 does not: the fallback is skipped and the task refunded, on the account and the key.
      const tight = await run(0.02, '[fb-tight]');
      expect(tight.task.status).toBe('failed');
      expect(tight.task.attempts[1]).toEqual({
        model: 'oai/gpt-image-1',
        provider: 'oai',
        error: "the API key's budget does not cover this model",
      });
      expect(fake.find('[fb-tight]')).toHaveLength(0);
      expect(tight.spend).toBe(0);
      expect(await balance(gw, key)).toBeCloseTo(1 - OAI_PER_IMAGE, 10);
    });

    test('a refused submission falls back to a cheaper model: the difference is refunded', async () => {
      const { key } = await createAccount(gw, uniqueEmail('media-fb'), 1);
      const res = await api(gw, 'POST', '/v1/tasks', {
        key,
        body: { model: 'oai/gpt-image-1', input: { prompt: 'a fox [reject]', delay_ms: 0 } },
      });
      const task = await settle(gw, key, res.body.data.task_id);
      expect(task.status).toBe('completed');
      expect(task.model).toBe('sb2/image');
      expect(task.cost).toBeCloseTo(SANDBOX_PER_IMAGE, 10);
      expect(task.attempts).toHaveLength(1);
      expect(task.attempts[0].model).toBe('oai/gpt-image-1');
      expect(task.attempts[0].provider).toBe('oai');
      expect(await balance(gw, key)).toBeCloseTo(1 - SANDBOX_PER_IMAGE, 10);
    });

    test('every model failing: the task fails, refunded in full, with every attempt listed; no fallbacks, no list', async () => {
      const { key } = await createAccount(gw, uniqueEmail('media-fb'), 1);
      const res = await api(gw, 'POST', '/v1/tasks', {
        key,
        body: { model: 'sandbox/image', input: { prompt: 'a fox [reject]', fail: true, delay_ms: 0 } },
      });
      const task = await settle(gw, key, res.body.data.task_id);
      expect(task.status).toBe('failed');
      expect(task.cost).toBe(0);
      expect(task.attempts.map((a: { model: string }) => a.model)).toEqual(['sandbox/image', 'oai/gpt-image-1']);
      expect(await balance(gw, key)).toBeCloseTo(1, 10);

      const lonely = await api(gw, 'POST', '/v1/tasks', {
        key,
        body: { model: 'oai/lonely', input: { prompt: 'a fox [reject] alone' } },
      });
      const failed = await settle(gw, key, lonely.body.data.task_id);
      expect(failed.status).toBe('failed');
      expect(failed.attempts).toBeUndefined();
    });

    test("a fallback's own input checks hold: another provider's custom voice is not used there", async () => {
      const { key } = await createAccount(gw, uniqueEmail('media-voice'), 1);
      const voice = await api(gw, 'POST', '/v1/resources/sandbox/voices', {
        key,
        body: { samples: [`http://127.0.0.1:${samples.port}/voice.wav`] },
      });
      expect(voice.status).toBe(200);
      const voiceId = voice.body.data.voice_id as string;
      const res = await api(gw, 'POST', '/v1/tasks', {
        key,
        body: { model: 'sandbox/speech', input: { text: 'in my voice', voice_id: voiceId, fail: true, delay_ms: 0 } },
      });
      expect(res.status).toBe(200);
      const task = await settle(gw, key, res.body.data.task_id);
      expect(task.status).toBe('failed');
      expect(task.attempts).toEqual([
        { model: 'sandbox/speech', provider: 'sandbox', error: 'sandbox: simulated failure' },
        {
          model: 'sb2/speech',
          provider: 'sb2',
          error: expect.stringContaining(`voice_id: unknown voice "${voiceId}"`),
        },
      ]);
      expect(await balance(gw, key)).toBeCloseTo(1, 10);

      // A built-in voice is every sandbox's: the fallback takes the task (and fails it as the sandbox was asked to).
      const builtIn = await api(gw, 'POST', '/v1/tasks', {
        key,
        body: {
          model: 'sandbox/speech',
          input: { text: 'in a stock voice', voice_id: [...SANDBOX_SPEECH_VOICE_IDS][0], fail: true, delay_ms: 0 },
        },
      });
      const tried = await settle(gw, key, builtIn.body.data.task_id);
      expect(tried.attempts.map((a: { error: string }) => a.error)).toEqual([
        'sandbox: simulated failure',
        'sandbox: simulated failure',
      ]);
    });
  });
}

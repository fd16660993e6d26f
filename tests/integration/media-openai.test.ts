import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, createAccount, uniqueEmail } from '../helpers/api.ts';
import { startFakeOpenAIMedia, type FakeOpenAIMedia } from '../helpers/fake-openai-media.ts';
import { MODES, startGateway, type GatewayProcess } from '../helpers/gateway-process.ts';
import { parsePng, parseWav } from '../helpers/media-checks.ts';

/**
 * The `openai` adapter's media endpoints end to end (issue 7): a gateway process whose
 * GATEWAY_CONFIG points an `openai` provider at a loopback fake of `/images/generations` and
 * `/audio/speech`, driven over HTTP as a client would — image tasks answered in base64 and by URL,
 * several images, speech, refusals, 429 with Retry-After, an upstream that never answers — and
 * every stored output compared byte for byte with what the fake served.
 */

const PER_IMAGE = 0.04;
const PER_1K_CHARS = 0.015;

function gatewayConfig(fake: FakeOpenAIMedia) {
  const image = (id: string, upstream: string, options?: Record<string, unknown>) => ({
    id,
    category: 'image',
    upstream_model: upstream,
    display_name: id,
    pricing: { per_image: PER_IMAGE },
    ...(options ? { options } : {}),
  });
  return {
    providers: [
      {
        id: 'oai',
        kind: 'openai',
        display_name: 'OpenAI (fake)',
        base_url: fake.baseUrl,
        api_key: '${FAKE_OPENAI_KEY}',
        max_retries: 1,
        timeout_ms: 1500,
      },
    ],
    models: [
      image('oai/gpt-image-1', 'gpt-image-1'),
      image('oai/dall-e-2', 'dall-e-2'),
      image('oai/image-deadline', 'gpt-image-1', { deadline_ms: 3000 }),
      {
        id: 'oai/tts-1',
        category: 'audio',
        upstream_model: 'tts-1',
        display_name: 'TTS 1',
        pricing: { per_1k_chars: PER_1K_CHARS, minimum: 0.0001 },
      },
    ],
  };
}

async function getTask(gw: GatewayProcess, key: string, id: string) {
  const res = await api(gw, 'GET', `/v1/tasks/${id}`, { key });
  expect(res.status).toBe(200);
  return res.body.data;
}

async function settle(gw: GatewayProcess, key: string, id: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const task = await getTask(gw, key, id);
    if (task.status !== 'processing' || Date.now() > deadline) return task;
    await Bun.sleep(50);
  }
}

async function create(gw: GatewayProcess, key: string, model: string, input: Record<string, unknown>) {
  const res = await api(gw, 'POST', '/v1/tasks', { key, body: { model, input } });
  expect(res.status).toBe(200);
  return res.body.data.task_id as string;
}

async function download(url: string) {
  const res = await fetch(url);
  return { res, bytes: new Uint8Array(await res.arrayBuffer()) };
}

/** Byte-for-byte equality, reported as lengths and digests rather than thousands of bytes. */
function expectSameBytes(actual: Uint8Array, expected: Uint8Array | undefined) {
  expect(expected).toBeDefined();
  const digest = (b: Uint8Array) => new Bun.CryptoHasher('sha256').update(b).digest('hex');
  expect({ length: actual.byteLength, sha256: digest(actual) }).toEqual({
    length: expected?.byteLength ?? -1,
    sha256: digest(expected ?? new Uint8Array()),
  });
}

async function balance(gw: GatewayProcess, key: string): Promise<number> {
  return (await api(gw, 'GET', '/v1/account', { key })).body.data.balance_usd;
}

for (const mode of MODES) {
  describe(`openai media adapter [${mode.name}]`, () => {
    let fake: FakeOpenAIMedia;
    let gw: GatewayProcess;
    let key: string;

    beforeAll(async () => {
      fake = await startFakeOpenAIMedia();
      const dir = await mkdtemp(join(tmpdir(), 'gw-oai-media-'));
      const configPath = join(dir, 'gateway.json');
      await writeFile(configPath, JSON.stringify(gatewayConfig(fake)));
      gw = await startGateway({
        ...(await mode.env('oaimedia')),
        GATEWAY_CONFIG: configPath,
        FAKE_OPENAI_KEY: fake.apiKey,
        ALLOW_PRIVATE_URLS: 'true',
        RATE_LIMIT_PER_MINUTE: '100000',
      });
      ({ key } = await createAccount(gw, uniqueEmail('oai-media'), 20));
    }, 60_000);
    afterAll(async () => {
      await gw?.stop();
      fake?.stop();
    });

    test('the configured media models are listed', async () => {
      const res = await api(gw, 'GET', '/v1/models', { key });
      expect(res.status).toBe(200);
      const ids = res.body.data.map((m: { id: string }) => m.id);
      expect(ids).toEqual(expect.arrayContaining(['oai/gpt-image-1', 'oai/dall-e-2', 'oai/tts-1']));
    });

    test('gpt-image-1, three images in base64: image_url + image_urls, stored byte for byte', async () => {
      const prompt = `a red fox in the snow ${mode.name}`;
      const before = await balance(gw, key);
      const id = await create(gw, key, 'oai/gpt-image-1', { prompt, n: 3, size: '1024x1024', quality: 'low' });
      const task = await settle(gw, key, id);
      expect(task).toMatchObject({ status: 'completed', category: 'image', cost: 3 * PER_IMAGE });
      const [sent] = fake.find(prompt);
      expect(sent?.path).toBe('/v1/images/generations');
      expect(sent?.headers.authorization).toBe(`Bearer ${fake.apiKey}`);
      expect(sent?.headers['content-type']).toBe('application/json');
      // The upstream model is the config's; nothing the gateway adds beyond the client's input.
      expect(sent?.body).toEqual({ prompt, n: 3, size: '1024x1024', quality: 'low', model: 'gpt-image-1' });
      const urls: string[] = task.output.image_urls;
      expect(urls).toHaveLength(3);
      expect(task.output.image_url).toBe(urls[0]);
      const served = fake.served.get(prompt) ?? [];
      for (const [i, url] of urls.entries()) {
        expect(url.startsWith(gw.url)).toBe(true);
        const { res, bytes } = await download(url);
        expect(res.headers.get('content-type')).toBe('image/png');
        expectSameBytes(bytes, served[i]);
        expect(parsePng(bytes).crcOk).toBe(true);
      }
      expect(await balance(gw, key)).toBeCloseTo(before - 3 * PER_IMAGE, 8);
    });

    test('dall-e-2 answers URLs by default: the images are copied into the gateway storage', async () => {
      const prompt = `a lighthouse at dusk ${mode.name}`;
      const id = await create(gw, key, 'oai/dall-e-2', { prompt, n: 2 });
      const task = await settle(gw, key, id);
      expect(task).toMatchObject({ status: 'completed', cost: 2 * PER_IMAGE });
      expect(fake.find(prompt)[0]?.body).toEqual({ prompt, n: 2, model: 'dall-e-2' });
      const served = fake.served.get(prompt) ?? [];
      expect(task.output.image_urls).toHaveLength(2);
      for (const [i, url] of (task.output.image_urls as string[]).entries()) {
        // The gateway's own URL, never the upstream's expiring one.
        expect(url.startsWith(gw.url)).toBe(true);
        const { res, bytes } = await download(url);
        expect(res.headers.get('content-type')).toBe('image/png');
        expectSameBytes(bytes, served[i]);
      }
    });

    test('dall-e-2 with response_format b64_json: one image, image_url only', async () => {
      const prompt = `a teapot ${mode.name}`;
      const id = await create(gw, key, 'oai/dall-e-2', { prompt, response_format: 'b64_json' });
      const task = await settle(gw, key, id);
      expect(task.status).toBe('completed');
      expect(Object.keys(task.output)).toEqual(['image_url']);
      expect(fake.find(prompt)[0]?.body).toEqual({ prompt, n: 1, response_format: 'b64_json', model: 'dall-e-2' });
      expectSameBytes((await download(task.output.image_url)).bytes, fake.served.get(prompt)?.[0]);
    });

    test('fewer images than asked: charged per image made, the rest refunded', async () => {
      const prompt = `[fewer] three cats ${mode.name}`;
      const before = await balance(gw, key);
      const id = await create(gw, key, 'oai/gpt-image-1', { prompt, n: 3 });
      const task = await settle(gw, key, id);
      expect(task).toMatchObject({ status: 'completed', cost: PER_IMAGE });
      expect(Object.keys(task.output)).toEqual(['image_url']);
      expect(await balance(gw, key)).toBeCloseTo(before - PER_IMAGE, 8);
    });

    test('an upstream refusal (400) fails the task with the upstream message, refunded in full', async () => {
      const prompt = `[reject] something not allowed ${mode.name}`;
      const before = await balance(gw, key);
      const id = await create(gw, key, 'oai/gpt-image-1', { prompt, n: 2 });
      const task = await settle(gw, key, id);
      expect(task).toMatchObject({ status: 'failed', cost: 0, output: null });
      expect(task.error_message).toBe(
        'oai: Your request was rejected as a result of our safety system. Your prompt may contain text that is not allowed by our safety system.',
      );
      // A refusal is final: not retried.
      expect(fake.find(prompt)).toHaveLength(1);
      expect(await balance(gw, key)).toBeCloseTo(before, 8);
    });

    test('429 with Retry-After: the call is retried after the asked delay and the task completes', async () => {
      const prompt = `[429-once] a mountain lake ${mode.name}`;
      const id = await create(gw, key, 'oai/gpt-image-1', { prompt });
      const task = await settle(gw, key, id);
      expect(task.status).toBe('completed');
      const sent = fake.find(prompt);
      expect(sent).toHaveLength(2);
      expect((sent[1]?.at ?? 0) - (sent[0]?.at ?? 0)).toBeGreaterThanOrEqual(900);
      expectSameBytes((await download(task.output.image_url)).bytes, fake.served.get(prompt)?.[0]);
    });

    test('an upstream that never answers: each call times out, and the task fails at its deadline, refunded', async () => {
      const prompt = `[hang] a slow painting ${mode.name}`;
      const before = await balance(gw, key);
      const id = await create(gw, key, 'oai/image-deadline', { prompt });
      const task = await settle(gw, key, id, 30_000);
      expect(task).toMatchObject({ status: 'failed', cost: 0 });
      expect(task.error_message).toBe('the task did not finish in time');
      // timeout_ms 1500 and max_retries 1: two attempts per step.
      expect(fake.find(prompt).length).toBeGreaterThanOrEqual(2);
      expect(await balance(gw, key)).toBeCloseTo(before, 8);
    }, 40_000);

    test('a body that never ends after its headers: the step ends at the deadline, the task fails, refunded', async () => {
      const prompt = `[stall-body] a painting that never arrives ${mode.name}`;
      const before = await balance(gw, key);
      const started = Date.now();
      const id = await create(gw, key, 'oai/image-deadline', { prompt });
      const task = await settle(gw, key, id, 15_000);
      // It stayed processing for good (the step read the trickle past any deadline).
      expect(task).toMatchObject({ status: 'failed', cost: 0 });
      expect(task.error_message).toBe('the task did not finish in time');
      expect(Date.now() - started).toBeLessThan(8_000);
      expect(await balance(gw, key)).toBeCloseTo(before, 8);
    }, 20_000);

    test('an output URL that answers 404 fails the task at once, refunded, with one generation', async () => {
      const prompt = `[gone-url] a fading picture ${mode.name}`;
      const before = await balance(gw, key);
      const id = await create(gw, key, 'oai/dall-e-2', { prompt });
      const task = await settle(gw, key, id, 15_000);
      expect(task).toMatchObject({ status: 'failed', cost: 0 });
      expect(task.error_message).toContain('the output could not be stored: output download failed: 404');
      // Each retry of the step generated (and was billed for) a new image, until the deadline.
      expect(fake.find(prompt)).toHaveLength(1);
      expect(await balance(gw, key)).toBeCloseTo(before, 8);
    }, 20_000);

    test('text to speech: `text` becomes `input`, the MP3 is stored as served, priced per 1,000 characters', async () => {
      const text = `Hello from the gateway, this is ${mode.name}.`;
      const id = await create(gw, key, 'oai/tts-1', { text });
      const task = await settle(gw, key, id);
      expect(task).toMatchObject({ status: 'completed', category: 'audio' });
      expect(task.cost).toBeCloseTo(([...text].length * PER_1K_CHARS) / 1000, 8);
      const [sent] = fake.find(text);
      expect(sent?.path).toBe('/v1/audio/speech');
      expect(sent?.headers.authorization).toBe(`Bearer ${fake.apiKey}`);
      expect(sent?.body).toEqual({ input: text, voice: 'alloy', response_format: 'mp3', model: 'tts-1' });
      const { res, bytes } = await download(task.output.audio_url);
      expect(res.headers.get('content-type')).toBe('audio/mpeg');
      expect(task.output.audio_url).toMatch(/\.mp3$/);
      expectSameBytes(bytes, fake.served.get(text)?.[0]);
    });

    test('text to speech: an `input` sent beside `text` never reaches the upstream in its place', async () => {
      const text = `Priced ${mode.name} ${Date.now()}.`;
      const long = 'spoken but never priced '.repeat(160);
      const id = await create(gw, key, 'oai/tts-1', { text, input: long });
      const task = await settle(gw, key, id);
      expect(task.status).toBe('completed');
      expect(task.cost).toBeCloseTo(([...text].length * PER_1K_CHARS) / 1000, 8);
      // The upstream spoke the 3,840 characters of `input`, charged for the short `text`.
      expect(fake.find(text)[0]?.body).toEqual({ input: text, voice: 'alloy', response_format: 'mp3', model: 'tts-1' });
    });

    test('text to speech as WAV with a voice and speed', async () => {
      const text = `A second voice, slower, ${mode.name}.`;
      const id = await create(gw, key, 'oai/tts-1', { text, voice: 'nova', response_format: 'wav', speed: 0.75 });
      const task = await settle(gw, key, id);
      expect(task.status).toBe('completed');
      expect(fake.find(text)[0]?.body).toEqual({
        input: text,
        voice: 'nova',
        response_format: 'wav',
        speed: 0.75,
        model: 'tts-1',
      });
      const { res, bytes } = await download(task.output.audio_url);
      expect(res.headers.get('content-type')).toBe('audio/wav');
      expectSameBytes(bytes, fake.served.get(text)?.[0]);
      expect(parseWav(bytes).riffSizeOk).toBe(true);
    });

    test('input is checked before anything is charged or sent', async () => {
      const cases: Array<[string, Record<string, unknown>, RegExp]> = [
        ['oai/gpt-image-1', { n: 2 }, /^input\.prompt: /],
        ['oai/gpt-image-1', { prompt: 'x', n: 11 }, /^input\.n: must be at most 10/],
        ['oai/gpt-image-1', { prompt: 'x', output_format: 'bmp' }, /^input\.output_format: must be one of/],
        ['oai/tts-1', { voice: 'alloy' }, /^input\.text: /],
        ['oai/tts-1', { text: 'hi', voice: 'nobody' }, /^input\.voice: must be one of/],
        ['oai/tts-1', { text: 'hi', speed: 9 }, /^input\.speed: must be at most 4/],
      ];
      const sent = fake.requests.length;
      for (const [model, input, message] of cases) {
        const res = await api(gw, 'POST', '/v1/tasks', { key, body: { model, input } });
        expect(res.status).toBe(422);
        expect(res.body.data.message).toMatch(message);
      }
      expect(fake.requests.length).toBe(sent);
    });

    test('dry run prices the ceiling of n images', async () => {
      const res = await api(gw, 'POST', '/v1/tasks', {
        key,
        body: { model: 'oai/gpt-image-1', input: { prompt: 'x', n: 4 }, dry_run: true },
      });
      expect(res.status).toBe(200);
      expect(res.body.data.cost).toBeCloseTo(4 * PER_IMAGE, 8);
    });
  });
}

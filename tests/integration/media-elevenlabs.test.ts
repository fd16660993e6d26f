import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sandboxSpeech } from '../../providers/sandbox/media/index.ts';
import { api, createAccount, uniqueEmail } from '../helpers/api.ts';
import { startFakeElevenLabs, type FakeElevenLabs } from '../helpers/fake-elevenlabs.ts';
import { MODES, startGateway, type GatewayProcess } from '../helpers/gateway-process.ts';
import { parseWav } from '../helpers/media-checks.ts';

/**
 * The `elevenlabs` adapter end to end (issue 7): a gateway process whose GATEWAY_CONFIG points
 * an `elevenlabs` provider at a loopback fake of the ElevenLabs API, driven over HTTP as a client
 * would — the voice list as the API contract's speech voices, text to speech by `voice_id`, voice cloning
 * from sample URLs (downloaded, kept, uploaded as multipart), a cloned voice usable only by its
 * account, refusals, 429 with Retry-After and an upstream that never answers — with the stored
 * audio compared byte for byte with what the fake served.
 */

const PER_1K_CHARS = 0.3;
const PREMADE = '21m00Tcm4TlvDq8ikWAM';

const SOURCE_SAMPLES: Record<string, Uint8Array<ArrayBuffer>> = {
  '/me.wav': sandboxSpeech(
    'This is a recording of my own voice, read slowly and clearly for cloning.',
  ) as Uint8Array<ArrayBuffer>,
  '/me.mp3': (() => {
    const bytes = crypto.getRandomValues(new Uint8Array(5000));
    bytes.set([0x49, 0x44, 0x33, 0x04, 0, 0, 0, 0, 0, 0], 0);
    return bytes;
  })(),
  '/notes.mp3': new TextEncoder().encode('these are my notes, not a recording'),
};

function gatewayConfig(fake: FakeElevenLabs) {
  const model = (id: string, options?: Record<string, unknown>) => ({
    id,
    category: 'audio',
    upstream_model: 'eleven_multilingual_v2',
    display_name: id,
    pricing: { per_1k_chars: PER_1K_CHARS },
    ...(options ? { options } : {}),
  });
  return {
    providers: [
      {
        id: 'eleven',
        kind: 'elevenlabs',
        display_name: 'ElevenLabs (fake)',
        base_url: fake.baseUrl,
        api_key: '${FAKE_ELEVEN_KEY}',
        max_retries: 1,
        timeout_ms: 1500,
      },
    ],
    models: [model('eleven/multilingual-v2'), model('eleven/tts-deadline', { deadline_ms: 3000 })],
  };
}

async function settle(gw: GatewayProcess, key: string, id: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const task = (await api(gw, 'GET', `/v1/tasks/${id}`, { key })).body.data;
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

for (const mode of MODES) {
  describe(`elevenlabs adapter [${mode.name}]`, () => {
    let fake: FakeElevenLabs;
    let source: ReturnType<typeof Bun.serve>;
    let src: string;
    let gw: GatewayProcess;
    let key: string;
    let otherKey: string;

    beforeAll(async () => {
      fake = await startFakeElevenLabs();
      source = Bun.serve({
        port: 0,
        hostname: '127.0.0.1',
        fetch(req) {
          const bytes = SOURCE_SAMPLES[new URL(req.url).pathname];
          return bytes
            ? new Response(bytes, { headers: { 'content-type': 'application/octet-stream' } })
            : new Response('not found', { status: 404 });
        },
      });
      src = `http://127.0.0.1:${source.port}`;
      const dir = await mkdtemp(join(tmpdir(), 'gw-eleven-'));
      const configPath = join(dir, 'gateway.json');
      await writeFile(configPath, JSON.stringify(gatewayConfig(fake)));
      gw = await startGateway({
        ...(await mode.env('eleven')),
        GATEWAY_CONFIG: configPath,
        FAKE_ELEVEN_KEY: fake.apiKey,
        ALLOW_PRIVATE_URLS: 'true',
        RATE_LIMIT_PER_MINUTE: '100000',
      });
      ({ key } = await createAccount(gw, uniqueEmail('eleven'), 20));
      ({ key: otherKey } = await createAccount(gw, uniqueEmail('eleven-other'), 20));
    }, 60_000);
    afterAll(async () => {
      await gw?.stop();
      fake?.stop();
      source?.stop(true);
    });

    test('GET /v1/resources/eleven/voices: the upstream voices in the API contract shape, cloned voices left out', async () => {
      const res = await api(gw, 'GET', '/v1/resources/eleven/voices', { key });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        code: 200,
        data: {
          voices: [
            {
              voice_id: '21m00Tcm4TlvDq8ikWAM',
              name: 'Rachel',
              category: 'premade',
              labels: { accent: 'american', age: 'young', gender: 'female' },
              preview_url:
                'https://storage.googleapis.com/eleven-public-prod/premade/voices/21m00Tcm4TlvDq8ikWAM/b4928a68-c03b-411f-8533-3d5c299fd451.mp3',
            },
            {
              voice_id: 'JBFqnCBsd6RMkjVDRZzb',
              name: 'George',
              category: 'premade',
              labels: { accent: 'British', age: 'middle aged', gender: 'male' },
              preview_url:
                'https://storage.googleapis.com/eleven-public-prod/premade/voices/JBFqnCBsd6RMkjVDRZzb/e6206d1a-0721-4787-aafb-06a6e705cac5.mp3',
            },
            {
              voice_id: '9BWtsMINqrJLrRacOk9x',
              name: 'Aria',
              category: 'professional',
              labels: { accent: 'American', age: 'middle-aged', gender: 'female' },
              preview_url:
                'https://storage.googleapis.com/eleven-public-prod/premade/voices/9BWtsMINqrJLrRacOk9x/405766b8-1f4e-4d3c-aba1-6f25333823ec.mp3',
            },
            {
              voice_id: 'pqHfZKP75CvOlQylNhV4',
              name: 'Bill',
              category: 'generated',
              labels: { accent: '', age: '', gender: 'male' },
              preview_url: '',
            },
          ],
        },
      });
      const listCall = fake.requests.find((r) => r.method === 'GET' && r.path === '/v1/voices');
      expect(listCall?.headers['xi-api-key']).toBe(fake.apiKey);
      // Served from the gateway's cache for a while: a second read does not call upstream again.
      const calls = fake.requests.filter((r) => r.path === '/v1/voices').length;
      expect((await api(gw, 'GET', '/v1/resources/eleven/voices', { key })).status).toBe(200);
      expect(fake.requests.filter((r) => r.path === '/v1/voices').length).toBe(calls);
    });

    test('text to speech by voice_id: the MP3 is stored as served, priced per 1,000 characters', async () => {
      const text = `Good evening from the gateway, ${mode.name}.`;
      const id = await create(gw, key, 'eleven/multilingual-v2', { text, voice_id: PREMADE, seed: 7 });
      const task = await settle(gw, key, id);
      expect(task).toMatchObject({ status: 'completed', category: 'audio' });
      expect(task.cost).toBeCloseTo(([...text].length * PER_1K_CHARS) / 1000, 8);
      const [sent] = fake.find(text);
      expect(sent?.path).toBe(`/v1/text-to-speech/${PREMADE}`);
      expect(sent?.query).toEqual({});
      expect(sent?.headers['xi-api-key']).toBe(fake.apiKey);
      expect(sent?.body).toEqual({ text, seed: 7, model_id: 'eleven_multilingual_v2' });
      const { res, bytes } = await download(task.output.audio_url);
      expect(res.headers.get('content-type')).toBe('audio/mpeg');
      expectSameBytes(bytes, fake.served.get(text));
    });

    test('output_format goes in the query: WAV and raw PCM are stored as served', async () => {
      const wavText = `A WAV answer, ${mode.name}.`;
      const wav = await settle(
        gw,
        key,
        await create(gw, key, 'eleven/multilingual-v2', {
          text: wavText,
          voice_id: PREMADE,
          output_format: 'wav_16000',
        }),
      );
      expect(wav.status).toBe('completed');
      expect(fake.find(wavText)[0]?.query).toEqual({ output_format: 'wav_16000' });
      const wavFile = await download(wav.output.audio_url);
      expect(wavFile.res.headers.get('content-type')).toBe('audio/wav');
      expectSameBytes(wavFile.bytes, fake.served.get(wavText));
      expect(parseWav(wavFile.bytes).sampleRate).toBe(16_000);

      const pcmText = `A raw PCM answer, ${mode.name}.`;
      const pcm = await settle(
        gw,
        key,
        await create(gw, key, 'eleven/multilingual-v2', {
          text: pcmText,
          voice_id: PREMADE,
          output_format: 'pcm_16000',
        }),
      );
      expect(pcm.status).toBe('completed');
      const pcmFile = await download(pcm.output.audio_url);
      expect(pcmFile.res.headers.get('content-type')).toBe('audio/L16; rate=16000; channels=1');
      expectSameBytes(pcmFile.bytes, fake.served.get(pcmText));
    });

    test("voice_id is checked at creation: unknown, missing, and the account's own cloned voices of others", async () => {
      const ttsCalls = () => fake.requests.filter((r) => r.path.startsWith('/v1/text-to-speech')).length;
      const before = ttsCalls();
      const cases: Array<[Record<string, unknown>, RegExp]> = [
        [{ text: 'hi', voice_id: 'NotAVoiceOfOurs0000' }, /^input\.voice_id: unknown voice "NotAVoiceOfOurs0000"/],
        // A voice of category `cloned` in the upstream account: another account's custom voice.
        [{ text: 'hi', voice_id: 'c38kUX8pkfYO2kHyqfFy' }, /^input\.voice_id: unknown voice/],
        [{ text: 'hi' }, /^input\.voice_id: /],
        [{ voice_id: PREMADE }, /^input\.text: /],
        [{ text: 'hi', voice_id: PREMADE, output_format: 'wav' }, /^input\.output_format: must match/],
      ];
      for (const [input, message] of cases) {
        const res = await api(gw, 'POST', '/v1/tasks', { key, body: { model: 'eleven/multilingual-v2', input } });
        expect(res.status).toBe(422);
        expect(res.body.data.message).toMatch(message);
      }
      expect(ttsCalls()).toBe(before);
    });

    test('voice cloning: samples downloaded, kept, uploaded as multipart; the voice works for its owner only', async () => {
      const res = await api(gw, 'POST', '/v1/resources/eleven/voices', {
        key,
        body: { samples: [`${src}/me.wav`, `${src}/me.mp3`], name: `My narrator ${mode.name}` },
      });
      expect(res.status).toBe(200);
      const voice = res.body.data;
      expect(voice).toEqual({
        voice_id: expect.any(String),
        name: `My narrator ${mode.name}`,
        samples: [expect.stringMatching(/\/files\/[^/]+\.wav$/), expect.stringMatching(/\/files\/[^/]+\.mp3$/)],
      });

      // ElevenLabs got the sample bytes exactly, with the key, under the documented field names.
      const upload = fake.uploads.find((u) => u.voiceId === voice.voice_id);
      expect(upload).toBeDefined();
      expect(upload?.name).toBe(`My narrator ${mode.name}`);
      expect(upload?.removeBackgroundNoise).toBe('false');
      expect(upload?.files.map((f) => [f.fileName, f.type])).toEqual([
        ['sample-1.wav', 'audio/wav'],
        ['sample-2.mp3', 'audio/mpeg'],
      ]);
      expectSameBytes(upload?.files[0]?.bytes as Uint8Array, SOURCE_SAMPLES['/me.wav']);
      expectSameBytes(upload?.files[1]?.bytes as Uint8Array, SOURCE_SAMPLES['/me.mp3']);
      const addCall = fake.requests.find(
        (r) => r.path === '/v1/voices/add' && r.body?.name === `My narrator ${mode.name}`,
      );
      expect(addCall?.headers['xi-api-key']).toBe(fake.apiKey);
      expect(addCall?.headers['content-type']).toStartWith('multipart/form-data; boundary=');

      // The gateway keeps its own copies, playable without a key.
      expectSameBytes((await download(voice.samples[0])).bytes, SOURCE_SAMPLES['/me.wav']);
      expectSameBytes((await download(voice.samples[1])).bytes, SOURCE_SAMPLES['/me.mp3']);

      // Never listed.
      const list = await api(gw, 'GET', '/v1/resources/eleven/voices', { key });
      expect(list.body.data.voices.map((v: { voice_id: string }) => v.voice_id)).not.toContain(voice.voice_id);

      // Usable by the account that made it…
      const text = `Spoken in my own voice, ${mode.name}.`;
      const task = await settle(
        gw,
        key,
        await create(gw, key, 'eleven/multilingual-v2', { text, voice_id: voice.voice_id }),
      );
      expect(task.status).toBe('completed');
      expect(fake.find(text)[0]?.path).toBe(`/v1/text-to-speech/${voice.voice_id}`);
      expectSameBytes((await download(task.output.audio_url)).bytes, fake.served.get(text));

      // …and by no one else.
      const other = await api(gw, 'POST', '/v1/tasks', {
        key: otherKey,
        body: { model: 'eleven/multilingual-v2', input: { text: 'hi', voice_id: voice.voice_id } },
      });
      expect(other.status).toBe(422);
      expect(other.body.data.message).toMatch(/^input\.voice_id: unknown voice/);
    });

    test('voice cloning refusals: a sample that is not audio never reaches ElevenLabs; an upstream refusal is a 422 with its message', async () => {
      const uploads = fake.uploads.length;
      const notAudio = await api(gw, 'POST', '/v1/resources/eleven/voices', {
        key,
        body: { samples: [`${src}/me.wav`, `${src}/notes.mp3`] },
      });
      expect(notAudio.status).toBe(422);
      expect(notAudio.body.data.message).toMatch(/^samples\[1\]: not an audio file/);
      const adds = fake.requests.filter((r) => r.path === '/v1/voices/add').length;

      const refused = await api(gw, 'POST', '/v1/resources/eleven/voices', {
        key,
        body: { samples: [`${src}/me.wav`], name: '[reject] too short' },
      });
      expect(refused.status).toBe(422);
      expect(refused.body.data.message).toBe(
        'samples: elevenlabs could not clone a voice from them: body.files: The uploaded audio is too short to clone a voice from.',
      );
      expect(fake.requests.filter((r) => r.path === '/v1/voices/add').length).toBe(adds + 1);
      expect(fake.uploads.length).toBe(uploads);
    });

    test("an upstream refusal fails the task with ElevenLabs' message, refunded in full", async () => {
      const text = `[reject] far too long ${mode.name}`;
      const id = await create(gw, key, 'eleven/multilingual-v2', { text, voice_id: PREMADE });
      const task = await settle(gw, key, id);
      expect(task).toMatchObject({ status: 'failed', cost: 0, output: null });
      expect(task.error_message).toBe(
        'eleven: You are sending too many characters in a single request. Split the text into smaller chunks.',
      );
      expect(fake.find(text)).toHaveLength(1);
    });

    test('429 too_many_concurrent_requests with Retry-After: retried after the delay, then completed', async () => {
      const text = `[429-once] busy right now ${mode.name}`;
      const task = await settle(gw, key, await create(gw, key, 'eleven/multilingual-v2', { text, voice_id: PREMADE }));
      expect(task.status).toBe('completed');
      const sent = fake.find(text);
      expect(sent).toHaveLength(2);
      expect((sent[1]?.at ?? 0) - (sent[0]?.at ?? 0)).toBeGreaterThanOrEqual(900);
      expectSameBytes((await download(task.output.audio_url)).bytes, fake.served.get(text));
    });

    test('an upstream that never answers: the task fails at its deadline, refunded', async () => {
      const text = `[hang] never spoken ${mode.name}`;
      const task = await settle(
        gw,
        key,
        await create(gw, key, 'eleven/tts-deadline', { text, voice_id: PREMADE }),
        30_000,
      );
      expect(task).toMatchObject({ status: 'failed', cost: 0, error_message: 'the task did not finish in time' });
      expect(fake.find(text).length).toBeGreaterThanOrEqual(2);
    }, 40_000);
  });
}

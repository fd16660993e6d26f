import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import Redis from 'ioredis';
import { sandboxSpeech } from '../../providers/sandbox/media/index.ts';
import { api, awayFromMinuteBoundary, createAccount, uniqueEmail } from '../helpers/api.ts';
import { MODES, startGateway, type GatewayProcess } from '../helpers/gateway-process.ts';
import { parseWav } from '../helpers/media-checks.ts';
import { queryDatabase } from '../helpers/services.ts';

/**
 * Provider resources (docs/api-contract.md, "Provider resources", "Errors", "Limits"): every
 * endpoint the sandbox serves, its shapes and refusals, and custom voices end to end — samples
 * fetched from a loopback server, kept, and usable in sandbox/speech by their owner only.
 */

const SPEC_STRING_VOICE_IDS =
  'achernar achird algenib algieba alnilam aoede autonoe callirrhoe charon despina enceladus erinome fenrir gacrux iapetus kore laomedeia leda orus puck pulcherrima rasalgethi sadachbia sadaltager schedar sulafat umbriel vindemiatrix zephyr zubenelgenubi'.split(
    ' ',
  );
const MOTION_CATEGORIES = ['new', 'star_end_frame', 'camera_control', 'viral', 'vfx', 'ugc'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const FILE_URL = /\/files\/[^/]+\.(wav|mp3|ogg|flac)$/;

/** Magic-byte heads of real formats, padded with noise: the gateway must judge by the bytes. */
function fakeAudio(head: number[] | string, size = 4096): Uint8Array<ArrayBuffer> {
  const start = typeof head === 'string' ? [...head].map((c) => c.charCodeAt(0)) : head;
  const out = crypto.getRandomValues(new Uint8Array(size));
  out.set(start, 0);
  return out;
}

const SAMPLES: Record<string, { body: Uint8Array<ArrayBuffer>; type: string }> = {
  '/voice.wav': {
    body: sandboxSpeech('Hello, this is a recording of my own voice for cloning.') as Uint8Array<ArrayBuffer>,
    type: 'application/octet-stream',
  },
  '/voice.mp3': { body: fakeAudio([0x49, 0x44, 0x33, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]), type: 'audio/mpeg' },
  '/voice.ogg': {
    body: fakeAudio([...'OggS'].map((c) => c.charCodeAt(0)).concat([0, 2, 0, 0, 0, 0, 0, 0, 0, 0])),
    type: 'audio/ogg',
  },
  '/voice.flac': { body: fakeAudio('fLaC\u0000\u0000\u0000\u0022'), type: 'audio/flac' },
  // Claims to be audio; its bytes are text.
  '/notes.mp3': { body: new TextEncoder().encode('these are my notes, not a recording'), type: 'audio/mpeg' },
};

/** A body without Content-Length: the size limit must hold while the bytes arrive. */
function chunked(bytes: Uint8Array): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.length) return controller.close();
      controller.enqueue(bytes.subarray(offset, offset + 1024 * 1024));
      offset += 1024 * 1024;
    },
  });
}

const download = async (url: string) => {
  const res = await fetch(url);
  return { res, bytes: new Uint8Array(await res.arrayBuffer()) };
};

for (const mode of MODES) {
  describe(`provider resources [${mode.name}]`, () => {
    let gw: GatewayProcess;
    let key: string;
    let otherKey: string;
    let env: Record<string, string>;
    let source: ReturnType<typeof Bun.serve>;
    let src: string;

    beforeAll(async () => {
      source = Bun.serve({
        port: 0,
        hostname: '127.0.0.1',
        fetch(req) {
          const path = new URL(req.url).pathname;
          if (path === '/redirect') return new Response(null, { status: 302, headers: { location: '/voice.wav' } });
          // One byte over 25 MB: declared up front, or only found out while streaming.
          if (path === '/big.wav')
            return new Response(fakeAudio('RIFF\u0000\u0000\u0000\u0000WAVE', 25 * 1024 * 1024 + 1));
          if (path === '/big-stream.wav')
            return new Response(chunked(fakeAudio('RIFF\u0000\u0000\u0000\u0000WAVE', 25 * 1024 * 1024 + 1)));
          const sample = SAMPLES[path];
          if (!sample) return new Response('not found', { status: 404 });
          return new Response(sample.body, { headers: { 'content-type': sample.type } });
        },
      });
      src = `http://127.0.0.1:${source.port}`;
      env = await mode.env('resources');
      gw = await startGateway({ ...env, ALLOW_PRIVATE_URLS: 'true', RATE_LIMIT_PER_MINUTE: '100000' });
      ({ key } = await createAccount(gw, uniqueEmail('res'), 20));
      ({ key: otherKey } = await createAccount(gw, uniqueEmail('res-other'), 20));
    }, 30_000);
    afterAll(async () => {
      await gw?.stop();
      source?.stop(true);
    });

    test('every resource endpoint needs the key', async () => {
      const paths: Array<[string, string]> = [
        ['GET', '/v1/resources/sandbox/clips/voices'],
        ['GET', '/v1/resources/sandbox/voices/sandbox-video-1'],
        ['GET', '/v1/resources/sandbox/voices'],
        ['POST', '/v1/resources/sandbox/voices'],
        ['GET', '/v1/resources/sandbox/voice/verification-phrase'],
        ['GET', '/clips/motions'],
        ['GET', '/v1/clips/motions'],
      ];
      for (const [method, path] of paths) {
        const res = await api(gw, method, path, {
          key: 'gw_not_a_key',
          ...(method === 'POST' ? { body: { samples: [`${src}/voice.wav`] } } : {}),
        });
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ success: false, code: 401, data: { message: expect.any(String) } });
      }
    });

    test('integer-id video voices: an array of {id, name}', async () => {
      const res = await api(gw, 'GET', '/v1/resources/sandbox/clips/voices', { key });
      expect(res.status).toBe(200);
      expect(res.body.success).toBe(true);
      expect(res.body.code).toBe(200);
      expect(res.body.data.length).toBeGreaterThan(5);
      for (const voice of res.body.data) expect(voice).toEqual({ id: expect.any(Number), name: expect.any(String) });
      expect(res.body.data.every((v: { id: number }) => Number.isInteger(v.id))).toBe(true);
    });

    test('string-id video voices: the 30 ids of the API contract, each with a description and a playable WAV sample', async () => {
      const res = await api(gw, 'GET', '/v1/resources/sandbox/voices/sandbox-video-1', { key });
      expect(res.status).toBe(200);
      expect(res.body.data.map((v: { id: string }) => v.id)).toEqual(SPEC_STRING_VOICE_IDS);
      for (const voice of res.body.data) {
        expect(voice).toEqual({
          id: expect.any(String),
          name: expect.any(String),
          description: expect.any(String),
          sample: expect.stringMatching(/^http/),
        });
        expect(voice.description.length).toBeGreaterThan(30);
      }
      expect(new Set(res.body.data.map((v: { sample: string }) => v.sample)).size).toBe(30);
      for (const voice of res.body.data.slice(0, 5)) {
        // Played by <audio> elements: no key.
        const { res: sample, bytes } = await download(voice.sample);
        expect(sample.status).toBe(200);
        expect(sample.headers.get('content-type')).toBe('audio/wav');
        const wav = parseWav(bytes);
        expect(wav).toMatchObject({ audioFormat: 1, channels: 1, sampleRate: 16_000, riffSizeOk: true });
        expect(wav.durationSeconds).toBeGreaterThan(2);
      }
    });

    test('speech voices: {voices: [{voice_id, name, category, labels, preview_url}]} with playable previews', async () => {
      const res = await api(gw, 'GET', '/v1/resources/sandbox/voices', { key });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body.data)).toEqual(['voices']);
      expect(res.body.data.voices.length).toBeGreaterThan(3);
      for (const voice of res.body.data.voices) {
        expect(voice).toEqual({
          voice_id: expect.any(String),
          name: expect.any(String),
          category: expect.any(String),
          labels: { accent: expect.any(String), age: expect.any(String), gender: expect.any(String) },
          preview_url: expect.stringMatching(/^http/),
        });
      }
      const { res: preview, bytes } = await download(res.body.data.voices[0].preview_url);
      expect(preview.status).toBe(200);
      expect(parseWav(bytes).sampleRate).toBe(16_000);
    });

    test('verification phrase: en by default, each of the ten languages, anything else 422', async () => {
      const en = await api(gw, 'GET', '/v1/resources/sandbox/voice/verification-phrase', { key });
      expect(en.status).toBe(200);
      expect(en.body).toEqual({
        success: true,
        code: 200,
        data: { phrase_id: expect.stringMatching(/^vp-en-/), phrase_text: expect.stringMatching(/voice/) },
      });
      const scripts: Record<string, RegExp> = {
        zh: /\p{Script=Han}/u,
        ja: /\p{Script=Hiragana}/u,
        ko: /\p{Script=Hangul}/u,
        hi: /\p{Script=Devanagari}/u,
        ru: /\p{Script=Cyrillic}/u,
        es: /\bvoz\b/,
        fr: /\bvoix\b/,
        pt: /\bvoz\b/,
        de: /\bStimme\b/,
        en: /\bvoice\b/,
      };
      for (const [language, script] of Object.entries(scripts)) {
        const res = await api(gw, 'GET', `/v1/resources/sandbox/voice/verification-phrase?language=${language}`, {
          key,
        });
        expect(res.status).toBe(200);
        expect(res.body.data.phrase_id).toStartWith(`vp-${language}-`);
        expect(res.body.data.phrase_text).toMatch(script);
      }
      for (const language of ['xx', 'it', 'en-US']) {
        const res = await api(gw, 'GET', `/v1/resources/sandbox/voice/verification-phrase?language=${language}`, {
          key,
        });
        expect(res.status).toBe(422);
        expect(res.body).toEqual({
          success: false,
          code: 422,
          data: { message: expect.stringMatching(/^language: /) },
        });
      }
    });

    test('motion presets: size, category and search on both paths; bad values are 400 in the motion shape', async () => {
      for (const path of ['/clips/motions', '/v1/clips/motions']) {
        const all = await api(gw, 'GET', path, { key });
        expect(all.status).toBe(200);
        expect(all.body.success).toBe(true);
        expect(all.body.data).toHaveLength(30);
        for (const preset of all.body.data) {
          expect(preset).toEqual({
            id: expect.stringMatching(UUID),
            name: expect.any(String),
            category: expect.any(String),
          });
          expect(MOTION_CATEGORIES).toContain(preset.category);
        }
        expect((await api(gw, 'GET', `${path}?size=4`, { key })).body.data).toEqual(all.body.data.slice(0, 4));
        const everything = (await api(gw, 'GET', `${path}?size=100`, { key })).body.data;
        expect(new Set(everything.map((p: { category: string }) => p.category))).toEqual(new Set(MOTION_CATEGORIES));
        expect((await api(gw, 'GET', `${path}?category=vfx`, { key })).status).toBe(200);
        const vfx = await api(gw, 'GET', `${path}?category=vfx&size=100`, { key });
        expect(vfx.body.data.length).toBeGreaterThan(0);
        expect(vfx.body.data.every((p: { category: string }) => p.category === 'vfx')).toBe(true);
        const search = await api(gw, 'GET', `${path}?search=DOLLY`, { key });
        expect(search.body.data.map((p: { name: string }) => p.name)).toEqual([
          'Dolly Zoom Reveal',
          'Dolly In',
          'Dolly Out',
        ]);
        // Ids are stable: the same preset has the same id in every answer.
        expect(search.body.data[1].id).toBe(everything.find((p: { name: string }) => p.name === 'Dolly In').id);

        const bad = await api(gw, 'GET', `${path}?category=cinematic`, { key });
        expect(bad.status).toBe(400);
        expect(bad.body).toEqual({
          code: 400,
          error: { message: expect.stringMatching(/^category: /), code: 'invalid_category' },
        });
        const badSize = await api(gw, 'GET', `${path}?size=zero`, { key });
        expect(badSize.status).toBe(400);
        expect(badSize.body).toEqual({
          code: 400,
          error: { message: expect.stringMatching(/^size: /), code: 'invalid_size' },
        });
      }
      if (env.REDIS_URL) {
        // Cached in the shared store for 30 minutes, one entry per query (the clock is unit-tested).
        const redis = new Redis(env.REDIS_URL);
        try {
          const ttl = await redis.pttl(`${env.REDIS_KEY_PREFIX}resources:motions:sandbox:30:vfx:`);
          expect(ttl).toBeGreaterThan(29 * 60_000);
          expect(ttl).toBeLessThanOrEqual(30 * 60_000);
        } finally {
          redis.disconnect();
        }
      }
    });

    test('an unknown vendor, product or model family is a 404 envelope', async () => {
      const paths: Array<[string, string]> = [
        ['GET', '/v1/resources/nobody/clips/voices'],
        ['GET', '/v1/resources/nobody/voices/sandbox-video-1'],
        ['GET', '/v1/resources/nobody/voices'],
        ['POST', '/v1/resources/nobody/voices'],
        ['GET', '/v1/resources/nobody/voice/verification-phrase'],
        ['GET', '/v1/resources/sandbox/films/voices'],
        ['GET', '/v1/resources/sandbox/voices/other-video-2'],
        ['GET', '/films/motions'],
      ];
      for (const [method, path] of paths) {
        const res = await api(gw, method, path, {
          key,
          ...(method === 'POST' ? { body: { samples: [`${src}/voice.wav`] } } : {}),
        });
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ success: false, code: 404, data: { message: expect.any(String) } });
      }
    });

    test('string-id and integer-id voices in sandbox/video tasks', async () => {
      const dry = (input: Record<string, unknown>) =>
        api(gw, 'POST', '/v1/tasks', {
          key,
          body: { model: 'sandbox/video', input: { prompt: 'a walk on the beach', ...input }, dry_run: true },
        });
      const image = { start_image_url: 'https://example.com/start.png' };
      expect((await dry({ voice: 'lapetus', ...image })).body).toEqual({
        success: true,
        code: 200,
        data: { cost: 0.25 },
      });
      expect((await dry({ voice: 'zephyr', ...image, voices: [1, { voice_id: 2 }] })).status).toBe(200);
      const refusals: Array<[Record<string, unknown>, RegExp]> = [
        [{ voice: 'zephyr' }, /^input\.voice: .*start_image_url/],
        [{ voice: 'alloy', ...image }, /^input\.voice: /],
        [{ voices: [999] }, /^input\.voices\[0\]: /],
        [{ voices: ['one'] }, /^input\.voices\[0\]: /],
      ];
      for (const [input, message] of refusals) {
        const res = await dry(input);
        expect(res.status).toBe(422);
        expect(res.body.data.message).toMatch(message);
      }
      // A real (non-dry) task with the alias runs and completes.
      const created = await api(gw, 'POST', '/v1/tasks', {
        key,
        body: { model: 'sandbox/video', input: { prompt: 'hi', voice: 'lapetus', ...image, delay_ms: 0 } },
      });
      expect(created.status).toBe(200);
      await settle(gw, key, created.body.data.task_id);
    });

    test('custom voice: refusals name the sample and keep nothing', async () => {
      const storedSamples = async () =>
        env.DATABASE_URL
          ? Number(
              (
                await queryDatabase<{ n: string }>(
                  env.DATABASE_URL,
                  "select count(*) as n from stored_files where source = 'voice_sample'",
                )
              )[0]!.n,
            )
          : 0;
      const before = await storedSamples();
      const post = (body: unknown) => api(gw, 'POST', '/v1/resources/sandbox/voices', { key, body });
      const cases: Array<[unknown, RegExp]> = [
        [{ samples: [`${src}/voice.wav`, `${src}/redirect`] }, /^samples\[1\]: .*redirect/],
        [{ samples: [`${src}/voice.wav`, `${src}/voice.mp3`, `${src}/notes.mp3`] }, /^samples\[2\]: not an audio file/],
        [{ samples: [`${src}/missing.wav`] }, /^samples\[0\]: .*404/],
        [{ samples: [`${src}/voice.wav`, `${src}/big.wav`] }, /^samples\[1\]: .*larger than 26214400 bytes/],
        [{ samples: [`${src}/big-stream.wav`] }, /^samples\[0\]: .*larger than 26214400 bytes/],
        [{ samples: Array.from({ length: 26 }, () => `${src}/voice.wav`) }, /^samples: .*25/],
        [{ samples: [] }, /^samples: /],
        [{ name: 'no samples' }, /^samples: is required/],
        [{ samples: ['not a url'] }, /^samples\[0\]: /],
        [{ samples: ['ftp://127.0.0.1/voice.wav'] }, /^samples\[0\]: /],
        [{ samples: [`${src}/voice.wav`], name: 42 }, /^name: /],
      ];
      for (const [body, message] of cases) {
        const res = await post(body);
        expect(res.status).toBe(422);
        expect(res.body).toEqual({ success: false, code: 422, data: { message: expect.stringMatching(message) } });
      }
      expect(await storedSamples()).toBe(before);
    });

    test('custom voice: counts as an upload and its samples’ bytes against the day’s volume; keeps to the key’s models', async () => {
      // A $0 account is on the free plan: 5 uploads a minute. Each voice was free of it before.
      await awayFromMinuteBoundary(20);
      const free = await createAccount(gw, uniqueEmail('res-free'), 0);
      const voice = () =>
        api(gw, 'POST', '/v1/resources/sandbox/voices', { key: free.key, body: { samples: [`${src}/voice.wav`] } });
      for (let i = 0; i < 5; i++) expect((await voice()).status).toBe(200);
      const sixth = await voice();
      expect(sixth.status).toBe(429);
      expect(sixth.body.data.message).toContain('upload limit reached: 5 uploads per minute');
      expect(Number(sixth.headers.get('retry-after'))).toBeGreaterThan(0);
      // Voices and uploads share the count.
      const upload = await fetch(`${gw.url}/upload`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${free.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ base64: Buffer.from('hello').toString('base64') }),
      });
      expect(upload.status).toBe(429);
      if (env.REDIS_URL) {
        const redis = new Redis(env.REDIS_URL);
        try {
          const day = new Date().toISOString().slice(0, 10);
          const counted = Number(await redis.get(`${env.REDIS_KEY_PREFIX}upload:bytes:${free.userId}:${day}`));
          expect(counted).toBe(5 * SAMPLES['/voice.wav']!.body.byteLength);
        } finally {
          redis.disconnect();
        }
      }
      // A key kept to other models may not make a voice; one that may use the provider's may.
      const imagesOnly = await api(gw, 'POST', '/v1/keys', {
        key,
        body: { name: 'images', models: ['sandbox/image'] },
      });
      const sandboxAll = await api(gw, 'POST', '/v1/keys', { key, body: { name: 'sandbox', models: ['sandbox/*'] } });
      const body = { samples: [`${src}/voice.wav`] };
      const refused = await api(gw, 'POST', '/v1/resources/sandbox/voices', { key: imagesOnly.body.data.key, body });
      expect(refused.status).toBe(403);
      expect(refused.body.data.message).toStartWith('model_not_allowed:');
      const made = await api(gw, 'POST', '/v1/resources/sandbox/voices', { key: sandboxAll.body.data.key, body });
      expect(made.status).toBe(200);
    });

    test('custom voice: kept copies outlive the sources; usable in sandbox/speech by its owner only; never listed', async () => {
      const urls = ['/voice.wav', '/voice.mp3', '/voice.ogg', '/voice.flac'].map((p) => `${src}${p}`);
      const res = await api(gw, 'POST', '/v1/resources/sandbox/voices', {
        key,
        body: { samples: urls, name: 'My narrator' },
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        code: 200,
        data: { voice_id: expect.any(String), name: 'My narrator', samples: expect.any(Array) },
      });
      const { voice_id: voiceId, samples } = res.body.data as { voice_id: string; samples: string[] };
      expect(samples).toHaveLength(4);
      for (const url of samples) {
        expect(url).toMatch(FILE_URL);
        expect(url.startsWith(`${gw.url}/files/`)).toBe(true);
      }

      const unnamed = await api(gw, 'POST', '/v1/resources/sandbox/voices', { key, body: { samples: [urls[0]] } });
      expect(unnamed.status).toBe(200);
      expect(unnamed.body.data.name).toEqual(expect.any(String));
      expect(unnamed.body.data.voice_id).not.toBe(voiceId);

      // The sources go away; the copies stay, byte for byte, with their real types.
      source.stop(true);
      await expect(fetch(urls[0]!)).rejects.toThrow();
      const types = ['audio/wav', 'audio/mpeg', 'audio/ogg', 'audio/flac'];
      for (const [i, url] of samples.entries()) {
        const { res: copy, bytes } = await download(url);
        expect(copy.status).toBe(200);
        expect(copy.headers.get('content-type')).toBe(types[i]!);
        expect(Bun.hash(bytes)).toBe(Bun.hash(SAMPLES[new URL(urls[i]!).pathname]!.body));
      }

      // Never listed.
      const list = await api(gw, 'GET', '/v1/resources/sandbox/voices', { key });
      expect(JSON.stringify(list.body)).not.toContain(voiceId);

      // The owner's speech task with it completes.
      const created = await api(gw, 'POST', '/v1/tasks', {
        key,
        body: { model: 'sandbox/speech', input: { text: 'Spoken in my own voice', voice_id: voiceId, delay_ms: 0 } },
      });
      expect(created.status).toBe(200);
      const task = await settle(gw, key, created.body.data.task_id);
      expect(task).toMatchObject({ status: 'completed', input: { voice_id: voiceId } });
      expect(parseWav((await download(task.output.audio_url)).bytes).sampleRate).toBe(16_000);

      // Another account cannot use it; an unknown id is refused; built-in ids always work.
      const speech = (k: string, voice_id: string) =>
        api(gw, 'POST', '/v1/tasks', {
          key: k,
          body: { model: 'sandbox/speech', input: { text: 'hello', voice_id }, dry_run: true },
        });
      for (const [k, id] of [
        [otherKey, voiceId],
        [key, 'cv_000000000000000000000000'],
        [key, 'v1'],
      ] as const) {
        const refused = await speech(k, id);
        expect(refused.status).toBe(422);
        expect(refused.body.data.message).toMatch(/^input\.voice_id: /);
      }
      const builtIn = (await api(gw, 'GET', '/v1/resources/sandbox/voices', { key: otherKey })).body.data.voices[0]
        .voice_id;
      expect((await speech(otherKey, builtIn)).status).toBe(200);
      expect((await speech(key, unnamed.body.data.voice_id)).status).toBe(200);
    });
  });
}

async function settle(gw: GatewayProcess, key: string, id: string, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const task = (await api(gw, 'GET', `/v1/tasks/${id}`, { key })).body.data;
    if (task.status !== 'processing') {
      expect(task.status).toBe('completed');
      return task;
    }
    if (Date.now() > deadline) throw new Error(`task ${id} still processing`);
    await Bun.sleep(50);
  }
}

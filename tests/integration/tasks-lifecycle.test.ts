import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { api, createAccount, uniqueEmail } from '../helpers/api.ts';
import { MODES, startGateway, type GatewayProcess } from '../helpers/gateway-process.ts';
import { PNG_SIGNATURE, parseMp4, parsePng, parseWav } from '../helpers/media-checks.ts';

/**
 * Media tasks from creation to their final state (docs/api-contract.md, "Tasks", "States and
 * transitions", the sandbox models): real output files, file serving, delays, failures, the legacy
 * per-model route and dry runs.
 */

const FILE_URL = /\/files\/[^/]+\.(png|mp4|wav)$/;

async function getTask(gw: GatewayProcess, key: string, id: string) {
  const res = await api(gw, 'GET', `/v1/tasks/${id}`, { key });
  expect(res.status).toBe(200);
  return res.body.data;
}

/** Polls the task until it leaves processing (or the time is up); returns the last record. */
async function settle(gw: GatewayProcess, key: string, id: string, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const task = await getTask(gw, key, id);
    if (task.status !== 'processing' || Date.now() > deadline) return task;
    await Bun.sleep(50);
  }
}

async function create(gw: GatewayProcess, key: string, body: unknown) {
  const res = await api(gw, 'POST', '/v1/tasks', { key, body });
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ success: true, code: 200, data: { task_id: expect.any(String), status: 'processing' } });
  return res.body.data.task_id as string;
}

async function download(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { headers });
  return { res, bytes: new Uint8Array(await res.arrayBuffer()) };
}

async function balance(gw: GatewayProcess, key: string): Promise<number> {
  const res = await api(gw, 'GET', '/v1/account', { key });
  expect(res.status).toBe(200);
  return res.body.data.balance_usd;
}

const wavBytesFor = (text: string) => 2 * Math.round(Math.max(0.5, [...text].length * 0.06) * 16_000);

for (const mode of MODES) {
  describe(`media task lifecycle [${mode.name}]`, () => {
    let gw: GatewayProcess;
    let key: string;
    const hooks: any[] = [];
    let receiver: ReturnType<typeof Bun.serve>;

    beforeAll(async () => {
      receiver = Bun.serve({
        port: 0,
        hostname: '127.0.0.1',
        async fetch(req) {
          hooks.push(await req.json());
          return new Response('ok');
        },
      });
      gw = await startGateway({
        ...(await mode.env('taskslife')),
        ALLOW_PRIVATE_URLS: 'true',
        RATE_LIMIT_PER_MINUTE: '100000',
      });
      ({ key } = await createAccount(gw, uniqueEmail('life'), 20));
    }, 30_000);
    afterAll(async () => {
      await gw?.stop();
      receiver?.stop(true);
    });

    test('sandbox/image: PNGs at the asked size, several for max_sequential_images, served with the right headers', async () => {
      const id = await create(gw, key, {
        model: 'sandbox/image',
        input: { prompt: 'a red fox', width: 320, height: 200, max_sequential_images: 5, delay_ms: 0 },
      });
      const task = await settle(gw, key, id);
      expect(task).toMatchObject({
        task_id: id,
        model: 'sandbox/image',
        category: 'image',
        status: 'completed',
        callback_url: null,
        callback_result: null,
      });
      expect(task).not.toHaveProperty('error_message');
      expect(task.input).toEqual({
        prompt: 'a red fox',
        width: 320,
        height: 200,
        max_sequential_images: 5,
        delay_ms: 0,
      });
      // ⌈5 / 2⌉ = 3 images, $0.01 each.
      expect(task.cost).toBeCloseTo(0.03, 10);
      expect(task.output.image_urls).toHaveLength(3);
      expect(task.output.image_url).toBe(task.output.image_urls[0]);
      expect(new Set(task.output.image_urls).size).toBe(3);
      const hashes = new Set<string>();
      for (const url of task.output.image_urls as string[]) {
        expect(url).toMatch(FILE_URL);
        expect(url.startsWith(`${gw.url}/files/`)).toBe(true);
        // Served without authentication.
        const { res, bytes } = await download(url);
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toBe('image/png');
        expect(res.headers.get('x-content-type-options')).toBe('nosniff');
        expect(res.headers.get('accept-ranges')).toBe('bytes');
        expect(Number(res.headers.get('content-length'))).toBe(bytes.length);
        const png = parsePng(bytes);
        expect({ width: png.width, height: png.height }).toEqual({ width: 320, height: 200 });
        expect(png.crcOk).toBe(true);
        expect(png.chunks.at(-1)).toBe('IEND');
        expect(png.chunks).toContain('IDAT');
        hashes.add(Bun.hash(bytes).toString());
      }
      expect(hashes.size).toBe(3);

      // Range → 206 with exactly those bytes; ETag + If-None-Match → 304.
      const url = task.output.image_url as string;
      const full = (await download(url)).bytes;
      const head = await download(url, { range: 'bytes=0-7' });
      expect(head.res.status).toBe(206);
      expect([...head.bytes]).toEqual(PNG_SIGNATURE);
      expect(head.res.headers.get('content-range')).toBe(`bytes 0-7/${full.length}`);
      expect(head.res.headers.get('content-length')).toBe('8');
      const mid = await download(url, { range: 'bytes=16-23' });
      expect(mid.res.status).toBe(206);
      expect([...mid.bytes]).toEqual([...full.subarray(16, 24)]);
      expect(mid.res.headers.get('content-range')).toBe(`bytes 16-23/${full.length}`);
      const tail = await download(url, { range: 'bytes=-12' });
      expect(tail.res.status).toBe(206);
      expect([...tail.bytes]).toEqual([...full.subarray(full.length - 12)]);
      expect(tail.res.headers.get('content-range')).toBe(`bytes ${full.length - 12}-${full.length - 1}/${full.length}`);

      const etag = (await fetch(url)).headers.get('etag');
      expect(etag).toMatch(/^"[^"]+"$/);
      const cached = await download(url, { 'if-none-match': etag! });
      expect(cached.res.status).toBe(304);
      expect(cached.bytes.length).toBe(0);
      expect(cached.res.headers.get('etag')).toBe(etag);
      const other = await download(url, { 'if-none-match': '"something-else"' });
      expect(other.res.status).toBe(200);
      expect(other.bytes.length).toBe(full.length);
    });

    test('sandbox/image defaults: one 512×512 PNG and no image_urls', async () => {
      const id = await create(gw, key, { model: 'sandbox/image', input: { prompt: 'defaults', delay_ms: 0 } });
      const task = await settle(gw, key, id);
      expect(task.status).toBe('completed');
      expect(task.cost).toBeCloseTo(0.01, 10);
      expect(Object.keys(task.output)).toEqual(['image_url']);
      const png = parsePng((await download(task.output.image_url)).bytes);
      expect([png.width, png.height]).toEqual([512, 512]);
    });

    test('sandbox/video: an H.264 MP4 of the asked duration', async () => {
      for (const [duration, resolution] of [
        [10, '1080p'],
        [5, '480p'],
      ] as const) {
        const id = await create(gw, key, {
          model: 'sandbox/video',
          input: { prompt: 'waves', duration, resolution, delay_ms: 0 },
        });
        const task = await settle(gw, key, id, 30_000);
        expect(task).toMatchObject({ status: 'completed', category: 'video', model: 'sandbox/video' });
        expect(task.cost).toBeCloseTo(0.05 * duration, 10);
        expect(Object.keys(task.output)).toEqual(['video_url']);
        expect(task.output.video_url).toMatch(/\.mp4$/);
        const { res, bytes } = await download(task.output.video_url);
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toBe('video/mp4');
        expect(res.headers.get('x-content-type-options')).toBe('nosniff');
        expect(res.headers.get('accept-ranges')).toBe('bytes');
        const mp4 = parseMp4(bytes);
        expect(mp4.topLevel[0]).toBe('ftyp');
        expect(mp4.topLevel).toContain('moov');
        expect(mp4.topLevel).toContain('mdat');
        expect(mp4.sampleEntries).toEqual(['avc1']);
        expect(mp4.durationSeconds).toBeCloseTo(duration, 2);
        expect([mp4.width, mp4.height]).toEqual([256, 144]);
        // 6 frames per second.
        expect(mp4.sampleCount).toBe(6 * duration);

        if (duration === 10) {
          const range = await download(task.output.video_url, { range: 'bytes=1000-1999' });
          expect(range.res.status).toBe(206);
          expect(range.res.headers.get('content-range')).toBe(`bytes 1000-1999/${bytes.length}`);
          expect(Bun.hash(range.bytes)).toBe(Bun.hash(bytes.subarray(1000, 2000)));
        }
      }
    }, 60_000);

    test('sandbox/speech: a 16 kHz mono WAV whose length follows the text', async () => {
      for (const text of ['Hello from the sandbox speech model', 'hi']) {
        const id = await create(gw, key, { model: 'sandbox/speech', input: { text, voice_id: 'amelia', delay_ms: 0 } });
        const task = await settle(gw, key, id);
        expect(task).toMatchObject({ status: 'completed', category: 'audio', model: 'sandbox/speech' });
        expect(task.cost).toBeCloseTo(Math.max(0.001, text.length * 0.0001), 10);
        expect(Object.keys(task.output)).toEqual(['audio_url']);
        expect(task.output.audio_url).toMatch(/\.wav$/);
        const { res, bytes } = await download(task.output.audio_url);
        expect(res.headers.get('content-type')).toBe('audio/wav');
        expect(res.headers.get('x-content-type-options')).toBe('nosniff');
        const wav = parseWav(bytes);
        expect(wav).toMatchObject({
          audioFormat: 1,
          channels: 1,
          sampleRate: 16_000,
          bitsPerSample: 16,
          blockAlign: 2,
          byteRate: 32_000,
          riffSizeOk: true,
        });
        expect(wav.dataBytes).toBe(wavBytesFor(text));
        expect(wav.durationSeconds).toBeCloseTo(Math.max(0.5, text.length * 0.06), 3);

        const etag = res.headers.get('etag')!;
        expect((await download(task.output.audio_url, { 'if-none-match': etag })).res.status).toBe(304);
        const r = await download(task.output.audio_url, { range: 'bytes=0-11' });
        expect(r.res.status).toBe(206);
        expect(new TextDecoder().decode(r.bytes)).toBe(`RIFF${new TextDecoder().decode(bytes.subarray(4, 8))}WAVE`);
      }
    });

    test('delay_ms is respected: still processing shortly after creation, completed only after the delay', async () => {
      const t0 = Date.now();
      const id = await create(gw, key, { model: 'sandbox/speech', input: { text: 'wait for it', delay_ms: 1500 } });
      const first = await getTask(gw, key, id);
      expect(first).toMatchObject({ task_id: id, status: 'processing', output: null });
      expect(first).not.toHaveProperty('error_message');
      await Bun.sleep(Math.max(0, t0 + 900 - Date.now()));
      const later = await getTask(gw, key, id);
      expect(Date.now() - t0).toBeLessThan(1500);
      expect(later.status).toBe('processing');
      const done = await settle(gw, key, id);
      const doneAt = Date.now();
      expect(done.status).toBe('completed');
      expect(doneAt - t0).toBeGreaterThanOrEqual(1500);
      expect(doneAt - t0).toBeLessThan(6_000);
      expect(done.output.audio_url).toMatch(FILE_URL);
    });

    test('fail: true ends failed with the sandbox message and cost 0', async () => {
      const id = await create(gw, key, {
        model: 'sandbox/video',
        input: { prompt: 'doomed', duration: 10, fail: true, delay_ms: 0 },
      });
      const task = await settle(gw, key, id);
      expect(task).toMatchObject({
        task_id: id,
        status: 'failed',
        output: null,
        error_message: 'sandbox: simulated failure',
        cost: 0,
      });
      // Diagnostics are never shown.
      expect(Object.keys(task).sort()).toEqual([
        'callback_result',
        'callback_url',
        'category',
        'cost',
        'created_at',
        'error_message',
        'input',
        // The API key that created it (every task has one).
        'key_id',
        'model',
        'output',
        // The x-request-id of the create call (every request has one).
        'request_id',
        'status',
        'task_id',
      ]);
    });

    test('completed and failed tasks never change again', async () => {
      const ok = await create(gw, key, {
        model: 'sandbox/image',
        input: { prompt: 'stable', max_sequential_images: 3, delay_ms: 0 },
      });
      const bad = await create(gw, key, {
        model: 'sandbox/speech',
        input: { text: 'stable', fail: true, delay_ms: 0 },
      });
      const okDone = await settle(gw, key, ok);
      const badDone = await settle(gw, key, bad);
      expect(okDone.status).toBe('completed');
      expect(badDone.status).toBe('failed');
      for (let i = 0; i < 2; i++) {
        await Bun.sleep(700);
        expect(await getTask(gw, key, ok)).toEqual(okDone);
        expect(await getTask(gw, key, bad)).toEqual(badDone);
      }
      const list = await api(gw, 'GET', '/v1/tasks?page_size=100', { key });
      expect(list.body.data.find((t: any) => t.task_id === ok)).toEqual(okDone);
      expect(list.body.data.find((t: any) => t.task_id === bad)).toEqual(badDone);
    });

    test('legacy POST /{slug}/generate for each model, by full slug and bare name; callback_url beside the fields', async () => {
      const hook = `http://127.0.0.1:${receiver.port}/hook-${mode.name}`;
      const cases = [
        {
          slug: 'sandbox-image',
          body: { prompt: 'legacy', width: 100, height: 80, delay_ms: 0 },
          model: 'sandbox/image',
          out: 'image_url',
        },
        {
          slug: 'image',
          body: { prompt: 'legacy bare', width: 96, height: 64, delay_ms: 0 },
          model: 'sandbox/image',
          out: 'image_url',
        },
        {
          slug: 'sandbox-video',
          body: { prompt: 'legacy', duration: 5, delay_ms: 0 },
          model: 'sandbox/video',
          out: 'video_url',
        },
        { slug: 'video', body: { prompt: 'legacy bare', delay_ms: 0 }, model: 'sandbox/video', out: 'video_url' },
        {
          slug: 'sandbox-speech',
          body: { text: 'legacy speech', delay_ms: 0 },
          model: 'sandbox/speech',
          out: 'audio_url',
        },
        { slug: 'speech', body: { text: 'bare', delay_ms: 0 }, model: 'sandbox/speech', out: 'audio_url' },
      ];
      for (const c of cases) {
        const res = await api(gw, 'POST', `/${c.slug}/generate`, { key, body: { ...c.body, callback_url: hook } });
        expect(res.status).toBe(200);
        expect(res.body).toEqual({
          success: true,
          code: 200,
          data: { task_id: expect.any(String), status: 'processing' },
        });
        const task = await settle(gw, key, res.body.data.task_id, 30_000);
        expect(task).toMatchObject({ model: c.model, status: 'completed', callback_url: hook });
        // callback_url travels beside the fields, never inside input.
        expect(task.input).toEqual(c.body);
        expect(task.output[c.out]).toMatch(FILE_URL);
        if (c.model === 'sandbox/image') {
          const png = parsePng((await download(task.output.image_url)).bytes);
          expect([png.width, png.height]).toEqual([
            (c.body as { width: number }).width,
            (c.body as { height: number }).height,
          ]);
        }
        if (c.model === 'sandbox/video')
          expect(parseMp4((await download(task.output.video_url)).bytes).durationSeconds).toBeCloseTo(5, 2);
      }
      // Each legacy task sent its completion callback.
      const deadline = Date.now() + 10_000;
      while (hooks.filter((h) => h.status === 'completed').length < cases.length && Date.now() < deadline)
        await Bun.sleep(50);
      const completed = hooks.filter((h) => h.status === 'completed');
      expect(completed).toHaveLength(cases.length);
      for (const h of completed) expect(Object.keys(h.data).some((k) => k.endsWith('_url'))).toBe(true);

      for (const slug of ['nope', 'sandbox-nope', 'sandbox-echo', 'echo']) {
        const res = await api(gw, 'POST', `/${slug}/generate`, { key, body: { prompt: 'x' } });
        expect(res.status).toBe(404);
        expect(res.body).toMatchObject({ success: false, code: 404, data: { message: expect.any(String) } });
      }
      // Bad fields on the legacy route are 422s naming them.
      const bad = await api(gw, 'POST', '/sandbox-video/generate', { key, body: { prompt: 'x', duration: 7 } });
      expect(bad.status).toBe(422);
      expect(bad.body.data.message).toContain('duration');
    }, 60_000);

    test('dry runs return the price and create and charge nothing', async () => {
      const { key: dryKey } = await createAccount(gw, uniqueEmail('dry'), 1);
      const cases: Array<[unknown, number]> = [
        [{ model: 'sandbox/image', input: { prompt: 'p', max_sequential_images: 4 } }, 0.04],
        [{ model: 'sandbox/image', input: { prompt: 'p' } }, 0.01],
        [{ model: 'sandbox/video', input: { prompt: 'p', duration: 10 } }, 0.5],
        [{ model: 'sandbox/video', input: { prompt: 'p' } }, 0.25],
        [{ model: 'sandbox/speech', input: { text: '12345' } }, 0.001],
        [{ model: 'sandbox/speech', input: { text: '12345678901234567890' } }, 0.002],
        [{ model: 'sandbox/speech', input: { text: '1234567890123456789012345' } }, 0.0025],
      ];
      for (const [body, cost] of cases) {
        const res = await api(gw, 'POST', '/v1/tasks', { key: dryKey, body: { ...(body as object), dry_run: true } });
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ success: true, code: 200, data: { cost: expect.any(Number) } });
        expect(res.body.data.cost).toBeCloseTo(cost, 10);
      }
      const legacy = await api(gw, 'POST', '/sandbox-video/generate', {
        key: dryKey,
        body: { prompt: 'p', duration: 10, dry_run: true },
      });
      expect(legacy.status).toBe(200);
      expect(legacy.body.data).toEqual({ cost: 0.5 });
      // A dry run still validates.
      const invalid = await api(gw, 'POST', '/v1/tasks', {
        key: dryKey,
        body: { model: 'sandbox/image', input: { prompt: 'p', max_sequential_images: 16 }, dry_run: true },
      });
      expect(invalid.status).toBe(422);
      expect(invalid.body.data.message).toContain('input.max_sequential_images');

      await Bun.sleep(300);
      expect(await balance(gw, dryKey)).toBe(1);
      const list = await api(gw, 'GET', '/v1/tasks', { key: dryKey });
      expect(list.body.data).toEqual([]);
      expect(list.body.pagination.total).toBe(0);
    });
  });
}

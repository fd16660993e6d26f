import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import * as v from 'valibot';
import { ConfigError } from '../../src/config/config-error.ts';
import type { ModelConfig, ProviderConfig } from '../../src/config/gateway-config.ts';
import { createOpenAIMedia } from '../../providers/openai/media-adapter.ts';
import { audioOutput } from '../../providers/common/media-audio-output.ts';
import { UpstreamAnswerError, syncMediaModel } from '../../providers/common/media-sync-job.ts';
import { configuredMedia } from '../../providers/common/config-media-model.ts';
import { UpstreamError } from '../../providers/common/upstream-error.ts';
import { UpstreamHealth } from '../../providers/common/upstream-health.ts';
import type { MediaJob, MediaModel } from '../../providers/types.ts';
import { startFakeOpenAIMedia, type FakeOpenAIMedia } from '../helpers/fake-openai-media.ts';

/**
 * The `openai` media adapter without a gateway: request bodies, answer mapping (base64, URL,
 * audio), refusals versus transient failures, config defaults and overrides, against the
 * loopback fake of tests/helpers/fake-openai-media.ts.
 */

let fake: FakeOpenAIMedia;
let provider: ProviderConfig;
beforeAll(async () => {
  fake = await startFakeOpenAIMedia();
  provider = {
    id: 'oai',
    kind: 'openai',
    base_url: fake.baseUrl,
    api_key: fake.apiKey,
    max_retries: 0,
    timeout_ms: 2000,
    missingEnv: [],
  };
});
afterAll(() => fake.stop());

const modelConfig = (over: Partial<ModelConfig>): ModelConfig => ({
  id: 'oai/m',
  category: 'image',
  display_name: 'm',
  upstream_model: 'gpt-image-1',
  ...over,
});

function modelOf(config: ModelConfig, health?: UpstreamHealth): MediaModel {
  const model = createOpenAIMedia(provider, health).model(config);
  if (!model) throw new Error('no model');
  return model;
}

const job = (model: MediaModel, input: Record<string, unknown>, upstreamModel = 'gpt-image-1'): MediaJob => ({
  taskId: crypto.randomUUID(),
  model: { id: 'oai/m', upstreamModel },
  input: v.parse(model.schema, input),
  signal: AbortSignal.timeout(10_000),
});

describe('openai media adapter', () => {
  test('serves image and audio categories, not video', () => {
    const media = createOpenAIMedia(provider);
    expect(media.model(modelConfig({ category: 'image' }))).toBeDefined();
    expect(media.model(modelConfig({ category: 'audio' }))).toBeDefined();
    expect(media.model(modelConfig({ category: 'video' }))).toBeUndefined();
  });

  test("images: base64 items become PNG bytes, in order, and the upstream model is the config's", async () => {
    const model = modelOf(modelConfig({ pricing: { per_image: 0.05 } }));
    const prompt = 'unit: three owls';
    const step = await model.start(job(model, { prompt, n: 3, model: 'sneaky-override' }));
    expect(step.state).toBe('succeeded');
    if (step.state !== 'succeeded') return;
    expect(step.outputs.map((o) => ('body' in o ? o.contentType : o.url))).toEqual([
      'image/png',
      'image/png',
      'image/png',
    ]);
    expect(step.outputs.map((o) => ('body' in o ? Buffer.from(o.body).toString('hex') : ''))).toEqual(
      (fake.served.get(prompt) ?? []).map((b) => Buffer.from(b).toString('hex')),
    );
    expect(fake.find(prompt)[0]?.body).toEqual({ prompt, n: 3, model: 'gpt-image-1' });
    expect(model.price({ prompt, n: 3 })).toBeCloseTo(0.15, 10);
    expect(model.finalPrice?.({ prompt, n: 3 }, step.outputs.slice(0, 2))).toBeCloseTo(0.1, 10);
  });

  test('images: URL items are handed to the runner to download', async () => {
    const model = modelOf(modelConfig({ upstream_model: 'dall-e-3' }));
    const step = await model.start(job(model, { prompt: 'unit: url image' }, 'dall-e-3'));
    expect(step).toEqual({
      state: 'succeeded',
      outputs: [{ kind: 'image', url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/images\/img-\d+\.png\?/) }],
    });
  });

  test('streaming is never asked for: a task wants the finished file', async () => {
    const model = modelOf(modelConfig({}));
    const prompt = 'unit: no stream';
    await model.start(job(model, { prompt, stream: true, partial_images: 2 }));
    expect(fake.find(prompt)[0]?.body).toEqual({ prompt, n: 1, model: 'gpt-image-1' });
  });

  test('a 4xx refusal is a failed step with the upstream message; the health stays good', async () => {
    const health = new UpstreamHealth();
    const model = modelOf(modelConfig({}), health);
    const step = await model.start(job(model, { prompt: 'unit: [reject] it' }));
    expect(step).toEqual({
      state: 'failed',
      message: expect.stringMatching(/^oai: Your request was rejected/),
      detail: { upstream_status: 400 },
    });
    expect(health.failing()).toBeUndefined();
  });

  test('429 after the in-call retries: the step waits for Retry-After, then the next call succeeds', async () => {
    const model = modelOf(modelConfig({}));
    const first = await model.start(job(model, { prompt: 'unit: [429-once] busy' }));
    expect(first).toEqual({ state: 'running', operation: { rate_limited: 1 }, pollAfterMs: 1000 });
    expect((await model.poll(job(model, { prompt: 'unit: [429-once] busy' }), { rate_limited: 1 })).state).toBe(
      'succeeded',
    );
  });

  test("bad credentials fail the step and count against the provider's health", async () => {
    const health = new UpstreamHealth();
    const model = createOpenAIMedia({ ...provider, api_key: 'sk-wrong' }, health).model(modelConfig({})) as MediaModel;
    const step = await model.start(job(model, { prompt: 'unit: wrong key' }));
    expect(step).toMatchObject({ state: 'failed', message: expect.stringMatching(/^oai: Incorrect API key provided/) });
    for (let i = 0; i < 5; i++) await model.start(job(model, { prompt: 'unit: wrong key' }));
    expect(health.failing()).toMatch(/consecutive upstream errors/);
  });

  test('speech: text → input, default voice and format, MP3 bytes', async () => {
    const model = modelOf(
      modelConfig({ category: 'audio', upstream_model: 'gpt-4o-mini-tts', pricing: { per_1k_chars: 0.015 } }),
    );
    const text = 'unit: hello there';
    const step = await model.start(job(model, { text, instructions: 'cheerful' }, 'gpt-4o-mini-tts'));
    expect(step).toMatchObject({ state: 'succeeded', outputs: [{ kind: 'audio', contentType: 'audio/mpeg' }] });
    expect(fake.find(text)[0]?.body).toEqual({
      input: text,
      voice: 'alloy',
      response_format: 'mp3',
      instructions: 'cheerful',
      model: 'gpt-4o-mini-tts',
    });
    expect(model.price({ text: 'x'.repeat(2000) })).toBeCloseTo(0.03, 10);
  });

  test("speech: raw PCM keeps the format's type", async () => {
    const model = modelOf(modelConfig({ category: 'audio', upstream_model: 'tts-1' }));
    const step = await model.start(job(model, { text: 'unit: pcm please', response_format: 'pcm' }, 'tts-1'));
    expect(step).toMatchObject({
      state: 'succeeded',
      outputs: [{ kind: 'audio', contentType: 'audio/L16; rate=24000; channels=1' }],
    });
  });

  test('a config that declares its own input replaces the default schema, and input_map renames', async () => {
    const model = modelOf(
      modelConfig({
        options: {
          input: { description: { type: 'string', required: true } },
          input_map: { description: 'prompt' },
          strict_input: true,
        },
      }),
    );
    expect(v.safeParse(model.schema, { prompt: 'x' }).success).toBe(false);
    const step = await model.start(job(model, { description: 'unit: renamed prompt' }));
    expect(step.state).toBe('succeeded');
    expect(fake.find('unit: renamed prompt')[0]?.body).toEqual({
      prompt: 'unit: renamed prompt',
      model: 'gpt-image-1',
    });
  });

  test("options.deadline_ms: the model's deadline; a bad value is a config error", () => {
    expect(modelOf(modelConfig({ options: { deadline_ms: 5000 } })).deadlineMs).toBe(5000);
    expect(modelOf(modelConfig({})).deadlineMs).toBe(10 * 60_000);
    expect(() => modelOf(modelConfig({ options: { deadline_ms: 'soon' } }))).toThrow(ConfigError);
  });
});

describe('synchronous media jobs', () => {
  const configured = configuredMedia({ id: 'x/y', category: 'image', display_name: 'y' });
  const jobOf = (): MediaJob => ({
    taskId: 't',
    model: { id: 'x/y', upstreamModel: 'y' },
    input: {},
    signal: new AbortController().signal,
  });
  const run = (err: unknown) =>
    syncMediaModel({ label: 'up', configured, run: async () => Promise.reject(err) }).start(jobOf());

  test('4xx other than 408 and 429 fail the task with the upstream message; transient failures are thrown to be retried', async () => {
    expect(await run(new UpstreamError('bad_request', 'nope', 400))).toEqual({
      state: 'failed',
      message: 'up: nope',
      detail: { upstream_status: 400 },
    });
    expect(await run(new UpstreamError('not_found', 'no such model', 404))).toMatchObject({
      state: 'failed',
      message: 'up: no such model',
    });
    expect(await run(new UpstreamAnswerError('no images'))).toEqual({ state: 'failed', message: 'up: no images' });
    for (const err of [
      new UpstreamError('bad_request', 'timeout', 408),
      new UpstreamError('server_error', 'oops', 502),
      new UpstreamError('timeout', 'late'),
      new Error('disk full'),
    ]) {
      expect(await run(err).catch((e: unknown) => e)).toBe(err);
    }
  });

  test('a 429 that outlived the in-call retries waits for its Retry-After on the task schedule, then calls again', async () => {
    let calls = 0;
    const model = syncMediaModel({
      label: 'up',
      configured,
      run: async () => {
        calls++;
        if (calls < 3) throw new UpstreamError('rate_limited', 'slow down', 429, calls === 1 ? 30 : undefined);
        return [{ kind: 'image', url: 'https://example.com/a.png' }];
      },
    });
    const first = await model.start(jobOf());
    expect(first).toEqual({ state: 'running', operation: { rate_limited: 1 }, pollAfterMs: 30_000 });
    const second = await model.poll(jobOf(), (first as { operation: unknown }).operation);
    // No Retry-After the second time: exponential from 2 s.
    expect(second).toEqual({ state: 'running', operation: { rate_limited: 2 }, pollAfterMs: 4_000 });
    expect(await model.poll(jobOf(), (second as { operation: unknown }).operation)).toEqual({
      state: 'succeeded',
      outputs: [{ kind: 'image', url: 'https://example.com/a.png' }],
    });
  });

  test('any other stored operation did not come from a synchronous model', async () => {
    const model = syncMediaModel({ label: 'up', configured, run: async () => [] });
    expect(await model.poll(jobOf(), { id: 'x' })).toMatchObject({ state: 'failed' });
  });
});

describe('audio answers', () => {
  const answer = (bytes: Uint8Array<ArrayBuffer>, type = 'application/octet-stream') =>
    new Response(bytes, { headers: { 'content-type': type } });

  test('typed by their bytes, else by the requested format; text is not audio', async () => {
    const mp3 = new Uint8Array([0x49, 0x44, 0x33, 4, 0, 0, 0, 0, 0, 0, 1, 2]);
    expect(await audioOutput(answer(mp3), 'audio/wav')).toMatchObject({ contentType: 'audio/mpeg' });
    expect(await audioOutput(answer(new Uint8Array(64)), 'audio/L16; rate=24000; channels=1')).toMatchObject({
      contentType: 'audio/L16; rate=24000; channels=1',
    });
    expect(
      await audioOutput(answer(new TextEncoder().encode('hello'), 'audio/mpeg'), 'audio/L16; rate=16000'),
    ).toMatchObject({ contentType: 'audio/L16; rate=16000' });
    await expect(audioOutput(answer(new TextEncoder().encode('{"error":"x"}')), 'audio/mpeg')).rejects.toBeInstanceOf(
      UpstreamAnswerError,
    );
    await expect(audioOutput(answer(new Uint8Array()), 'audio/mpeg')).rejects.toThrow('no audio');
  });
});

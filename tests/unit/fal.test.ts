import { describe, expect, test } from 'bun:test';
import { createFalProvider } from '../../providers/fal/index.ts';
import { FalQueue } from '../../providers/fal/fal-queue.ts';
import { falOutputs } from '../../providers/fal/fal-result.ts';
import { falSettings } from '../../providers/fal/fal-settings.ts';
import { UpstreamHealth } from '../../providers/common/upstream-health.ts';
import type { ModelConfig, ProviderConfig } from '../../src/config/gateway-config.ts';

/**
 * Issue 7, fal adapter pieces: reading files out of results, and where status/result/cancel live.
 * @see https://docs.fal.ai/model-endpoints/queue
 */

const urls = (outputs: ReturnType<typeof falOutputs>) =>
  outputs.map((o) => ('url' in o ? o.url : `body:${o.contentType}`));

describe('result files', () => {
  test('images, a video, audio: the documented File objects', async () => {
    const images = (await Bun.file(`${import.meta.dir}/../fixtures/fal/result-images.json`).json()) as Record<
      string,
      unknown
    >;
    expect(falOutputs(images, 'image')).toEqual([
      { kind: 'image', url: 'https://v3.fal.media/files/rabbit/out-0.png', contentType: 'image/png' },
    ]);
    const video = (await Bun.file(`${import.meta.dir}/../fixtures/fal/result-video.json`).json()) as Record<
      string,
      unknown
    >;
    expect(falOutputs(video, 'video')).toEqual([
      { kind: 'video', url: 'https://v3.fal.media/files/koala/out.mp4', contentType: 'video/mp4' },
    ]);
    expect(urls(falOutputs({ audio_file: { url: 'https://f/a.wav' } }, 'audio'))).toEqual(['https://f/a.wav']);
    expect(urls(falOutputs({ audio: { url: 'https://f/b.mp3' }, images: [] }, 'audio'))).toEqual(['https://f/b.mp3']);
  });

  test('output_field picks a path; otherwise anything URL-like; data URIs are decoded', () => {
    const result = { images: [{ url: 'https://f/i.png' }], mask: { url: 'https://f/m.png' } };
    expect(urls(falOutputs(result, 'image', 'mask'))).toEqual(['https://f/m.png']);
    expect(urls(falOutputs({ result: { frames: ['https://f/1.png', 'https://f/2.png'] } }, 'image'))).toEqual([
      'https://f/1.png',
      'https://f/2.png',
    ]);
    expect(urls(falOutputs({ images: [{ url: 'data:image/png;base64,iVBORw0KGgo=' }] }, 'image'))).toEqual([
      'body:image/png',
    ]);
    expect(falOutputs({ seed: 3, prompt: 'not a url' }, 'image')).toEqual([]);
    // A data URI with a bad percent-escape is no file (it threw a URIError, retried until the deadline).
    expect(falOutputs({ images: [{ url: 'data:image/png,%E0%A4%A' }] }, 'image')).toEqual([]);
  });
});

describe('queue URLs', () => {
  const config = (base?: string): ProviderConfig => ({
    id: 'fal',
    kind: 'fal',
    api_key: 'k',
    base_url: base,
    missingEnv: [],
  });

  test('the URLs fal answered with when they stay on the queue host; else the documented paths without the subpath', () => {
    const queue = new FalQueue(falSettings(config()), new UpstreamHealth());
    const same = queue.urlsFor('fal-ai/flux/dev', {
      request_id: 'r1',
      status_url: 'https://queue.fal.run/fal-ai/flux/requests/r1/status',
      response_url: 'https://queue.fal.run/fal-ai/flux/requests/r1',
      cancel_url: 'https://queue.fal.run/fal-ai/flux/requests/r1/cancel',
    });
    expect(same.status).toBe('https://queue.fal.run/fal-ai/flux/requests/r1/status');
    const foreign = queue.urlsFor('fal-ai/flux/dev', {
      request_id: 'r2',
      status_url: 'https://evil.example/steal',
      response_url: 'not a url',
    });
    expect(foreign).toEqual({
      status: 'https://queue.fal.run/fal-ai/flux/requests/r2/status',
      response: 'https://queue.fal.run/fal-ai/flux/requests/r2',
      cancel: 'https://queue.fal.run/fal-ai/flux/requests/r2/cancel',
    });
  });

  test('models need a fal model id', () => {
    const fal = createFalProvider(config('http://127.0.0.1:9/'));
    const model = (over: Partial<ModelConfig>) =>
      ({ id: 'fal/x', category: 'image', display_name: 'X', ...over }) as ModelConfig;
    expect(() => fal.media!.model(model({}))).toThrow('models[fal/x].upstream_model: fal needs the model id');
    expect(() =>
      fal.media!.model(model({ upstream_model: 'fal-ai/flux/dev', options: { deadline_ms: 'soon' } })),
    ).toThrow('models[fal/x].options.deadline_ms');
    expect(
      fal.media!.model(model({ upstream_model: 'fal-ai/flux/dev', options: { deadline_ms: 120_000 } }))?.deadlineMs,
    ).toBe(120_000);
    expect(fal.media!.webhook).toBeUndefined();
  });
});

import { describe, expect, test } from 'bun:test';
import { parseTarget } from '../../providers/replicate/replicate-api.ts';
import { createReplicateProvider } from '../../providers/replicate/index.ts';
import { finishedStep, predictionOutputs } from '../../providers/replicate/replicate-prediction.ts';
import { replicateSettings } from '../../providers/replicate/replicate-settings.ts';
import { verifyWebhook } from '../../providers/replicate/replicate-signature.ts';
import { UpstreamError } from '../../providers/common/upstream-error.ts';
import { UpstreamHealth } from '../../providers/common/upstream-health.ts';
import { stepForUpstreamError } from '../../providers/common/upstream-step.ts';
import { jsonBody, MAX_UPSTREAM_JSON_DEPTH } from '../../providers/common/upstream-request.ts';
import { replicateWebhook } from '../../providers/replicate/replicate-webhook.ts';
import { createHmac } from 'node:crypto';
import type { ModelConfig, ProviderConfig } from '../../src/config/gateway-config.ts';
import { isReachableFromOutside } from '../../src/upstreams/provider-host.ts';

/**
 * Issue 7, Replicate adapter pieces. The signature vector is the public example of the Standard
 * Webhooks / Svix scheme Replicate uses (same headers, same signed content, same `whsec_` keys).
 * @see https://replicate.com/docs/topics/webhooks/verify-webhook
 * @see https://docs.svix.com/receiving/verifying-payloads/how-manual
 */

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const ID = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
const TS = '1614265330';
const BODY = '{"test": 2432232314}';
const SIGNATURE = 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=';
const NOW = Number(TS) * 1000;

const headers = (over: Record<string, string | undefined> = {}) => {
  const h = new Headers();
  for (const [k, val] of Object.entries({
    'webhook-id': ID,
    'webhook-timestamp': TS,
    'webhook-signature': SIGNATURE,
    ...over,
  }))
    if (val !== undefined) h.set(k, val);
  return h;
};

describe('webhook signatures', () => {
  test('the documented example verifies; a list with one valid signature verifies', () => {
    expect(verifyWebhook(SECRET, headers(), BODY, NOW)).toEqual({ ok: true });
    expect(
      verifyWebhook(SECRET, headers({ 'webhook-signature': `v1,Zm9vYmFy ${SIGNATURE} v2,abc` }), BODY, NOW),
    ).toEqual({ ok: true });
  });

  test('tampered body, wrong secret, other id, stale or future timestamp, missing headers are refused', () => {
    expect(verifyWebhook(SECRET, headers(), BODY.replace('2', '3'), NOW).ok).toBe(false);
    expect(verifyWebhook('whsec_d3Jvbmcgc2VjcmV0', headers(), BODY, NOW).ok).toBe(false);
    expect(verifyWebhook(SECRET, headers({ 'webhook-id': 'msg_other' }), BODY, NOW).ok).toBe(false);
    expect(verifyWebhook(SECRET, headers(), BODY, NOW + 6 * 60_000)).toEqual({
      ok: false,
      reason: 'webhook-timestamp is too far from now',
    });
    expect(verifyWebhook(SECRET, headers(), BODY, NOW - 6 * 60_000).ok).toBe(false);
    expect(verifyWebhook(SECRET, headers({ 'webhook-signature': undefined }), BODY, NOW).ok).toBe(false);
    expect(verifyWebhook(SECRET, headers({ 'webhook-signature': 'v1,' }), BODY, NOW).ok).toBe(false);
    expect(verifyWebhook(SECRET, headers({ 'webhook-timestamp': 'soon' }), BODY, NOW).ok).toBe(false);
  });
});

describe('model targets', () => {
  test('owner/name is an official model (or a deployment); a version id or owner/name:version pins a version', () => {
    expect(parseTarget('black-forest-labs/flux-schnell', false)).toEqual({
      kind: 'model',
      owner: 'black-forest-labs',
      name: 'flux-schnell',
    });
    expect(parseTarget('acme/my-deploy', true)).toEqual({ kind: 'deployment', owner: 'acme', name: 'my-deploy' });
    const version = '39ed52f2a78e934b3ba6e2a89f5b1c712de7dfea535525255b1aa35c5565e08b';
    expect(parseTarget(`stability-ai/sdxl:${version}`, false)).toEqual({ kind: 'version', version });
    expect(parseTarget(version, false)).toEqual({ kind: 'version', version });
    expect(parseTarget('just-a-name', false)).toBeUndefined();
    expect(parseTarget('a/b/c', false)).toBeUndefined();
    expect(parseTarget('a/b:', false)).toBeUndefined();
  });
});

describe('outputs and endings', () => {
  test('a URL, a list, an object and data URLs all become outputs of the model kind', () => {
    expect(predictionOutputs('https://r.delivery/a.png', 'image')).toEqual([
      { kind: 'image', url: 'https://r.delivery/a.png' },
    ]);
    expect(
      predictionOutputs(['https://r/a.png', 'https://r/b.png'], 'image').map((o) => ('url' in o ? o.url : '')),
    ).toEqual(['https://r/a.png', 'https://r/b.png']);
    expect(predictionOutputs({ audio_out: 'https://r/a.wav', text: 'hello' }, 'audio')).toEqual([
      { kind: 'audio', url: 'https://r/a.wav' },
    ]);
    expect(predictionOutputs({ video: 'https://r/v.mp4', poster: 'https://r/p.jpg' }, 'video', 'video')).toEqual([
      { kind: 'video', url: 'https://r/v.mp4' },
    ]);
    const [data] = predictionOutputs('data:image/png;base64,iVBORw0KGgo=', 'image');
    expect(data).toEqual({
      kind: 'image',
      body: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      contentType: 'image/png',
    });
  });

  test('failed and canceled predictions fail with the upstream text; running ones are not finished', () => {
    expect(finishedStep({ id: 'p', status: 'failed', error: 'NSFW content detected' }, 'image')).toMatchObject({
      state: 'failed',
      message: 'replicate: NSFW content detected',
    });
    expect(finishedStep({ id: 'p', status: 'canceled' }, 'image')).toMatchObject({
      state: 'failed',
      message: 'replicate: the prediction was canceled upstream',
    });
    expect(finishedStep({ id: 'p', status: 'succeeded', output: 'just text' }, 'image')).toMatchObject({
      state: 'failed',
      message: 'replicate: the prediction succeeded without a file output',
    });
    expect(finishedStep({ id: 'p', status: 'processing' }, 'image')).toBeUndefined();
  });
});

describe('settings and config', () => {
  const provider = (options: Record<string, unknown>, missingEnv: string[] = []): ProviderConfig => ({
    id: 'rep',
    kind: 'replicate',
    api_key: 'r8_x',
    options,
    missingEnv,
  });
  const publicHost = { publicUrl: 'https://gw.example.com/', publicUrlReachable: true };
  const loopback = { publicUrl: 'http://127.0.0.1:8080', publicUrlReachable: false };

  test('webhooks only with a secret, and in auto mode only when PUBLIC_URL is reachable', () => {
    expect(replicateSettings(provider({ webhook_secret: SECRET }), publicHost).webhookUrl).toBe(
      'https://gw.example.com/upstream-webhooks/rep',
    );
    expect(replicateSettings(provider({ webhook_secret: SECRET }), loopback).webhookUrl).toBeUndefined();
    expect(replicateSettings(provider({ webhook_secret: SECRET, webhooks: 'always' }), loopback).webhookUrl).toBe(
      'http://127.0.0.1:8080/upstream-webhooks/rep',
    );
    expect(
      replicateSettings(provider({ webhook_secret: SECRET, webhooks: 'never' }), publicHost).webhookUrl,
    ).toBeUndefined();
    expect(replicateSettings(provider({}), publicHost).webhookUrl).toBeUndefined();
    expect(replicateSettings(provider({}), publicHost).base).toBe('https://api.replicate.com/v1');
    expect(() => replicateSettings(provider({ webhooks: 'always' }), publicHost)).toThrow(
      'providers[rep].options.webhook_secret: webhooks: always needs the signing secret',
    );
    expect(() => replicateSettings(provider({ webhooks: 'sometimes' }), publicHost)).toThrow(
      'providers[rep].options.webhooks',
    );
  });

  test('a model needs an upstream model Replicate can address', () => {
    const rep = createReplicateProvider(provider({}), loopback);
    const model = (over: Partial<ModelConfig>) =>
      ({ id: 'rep/x', category: 'image', display_name: 'X', ...over }) as ModelConfig;
    expect(() => rep.media!.model(model({}))).toThrow(
      'models[rep/x].upstream_model: replicate needs owner/name or a version id',
    );
    expect(() => rep.media!.model(model({ upstream_model: 'flux' }))).toThrow(
      'models[rep/x].upstream_model: expected owner/name',
    );
    expect(() => rep.media!.model(model({ upstream_model: 'a/b', options: { poll_interval_ms: 1 } }))).toThrow(
      'models[rep/x].options.poll_interval_ms',
    );
    expect(rep.media!.model(model({ upstream_model: 'a/b', category: 'llm' }))).toBeUndefined();
    expect(rep.media!.model(model({ upstream_model: 'a/b' }))?.deadlineMs).toBe(30 * 60_000);
  });

  test('PUBLIC_URL reachability: loopback, private and local names are not', () => {
    expect(isReachableFromOutside('http://127.0.0.1:8080')).toBe(false);
    expect(isReachableFromOutside('http://10.1.2.3')).toBe(false);
    expect(isReachableFromOutside('http://[::1]:8080')).toBe(false);
    expect(isReachableFromOutside('http://localhost:8080')).toBe(false);
    expect(isReachableFromOutside('http://gateway.internal')).toBe(false);
    expect(isReachableFromOutside('https://gw.example.com')).toBe(true);
    expect(isReachableFromOutside('http://203.0.113.9')).toBe(false); // documentation range: reserved
    expect(isReachableFromOutside('http://8.8.8.8')).toBe(true);
  });
});

describe('upstream errors during a step', () => {
  const again = (ms: number) => ({ state: 'running' as const, operation: {}, pollAfterMs: ms });
  test('4xx fails the task, 429 waits Retry-After (or backs off), 5xx and network errors are rethrown for the runner', () => {
    expect(stepForUpstreamError(new UpstreamError('bad_request', 'prompt too long', 422), 'replicate', again)).toEqual({
      state: 'failed',
      message: 'replicate: prompt too long',
      detail: { upstream_status: 422 },
    });
    expect(stepForUpstreamError(new UpstreamError('rate_limited', 'slow down', 429, 7), 'x', again)).toEqual(
      again(7000),
    );
    expect(stepForUpstreamError(new UpstreamError('rate_limited', 'slow down', 429), 'x', again, 2)).toEqual(
      again(8000),
    );
    expect(() => stepForUpstreamError(new UpstreamError('server_error', 'boom', 503), 'x', again)).toThrow('boom');
    expect(() => stepForUpstreamError(new UpstreamError('unreachable', 'down'), 'x', again)).toThrow('down');
    expect(() => stepForUpstreamError(new Error('disk full'), 'x', again)).toThrow('disk full');
    // An answer the next try would get again: the task fails now rather than at its deadline.
    expect(stepForUpstreamError(new UpstreamError('malformed', 'too deep', 200), 'x', again)).toMatchObject({
      state: 'failed',
      message: 'x: too deep',
    });
  });

  test('a 2xx answer nested past the limit is malformed (not JSON stays a retried server error)', async () => {
    const deep = (n: number) => `{"output":${'['.repeat(n)}"https://x/a.png"${']'.repeat(n)}}`;
    const answer = (text: string) => new Response(text, { status: 200 });
    expect(await jsonBody(answer(deep(MAX_UPSTREAM_JSON_DEPTH - 1)))).toMatchObject({ output: expect.any(Array) });
    const refused = await jsonBody(answer(deep(100_000))).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(UpstreamError);
    expect(refused).toMatchObject({ kind: 'malformed', upstreamStatus: 200 });
    expect(await jsonBody(answer('<html>')).catch((err: UpstreamError) => err.kind)).toBe('server_error');
  });

  test('a signed webhook nested past the limit is refused before it is parsed', async () => {
    const body = `{"id":"p1","status":"succeeded","output":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    const config: ProviderConfig = {
      id: 'rep',
      kind: 'replicate',
      api_key: 'r8_x',
      options: { webhook_secret: SECRET },
      missingEnv: [],
    };
    const webhook = replicateWebhook(
      replicateSettings(config, { publicUrl: 'https://gw.example.com/', publicUrlReachable: true }),
    );
    const timestamp = String(Math.floor(Date.now() / 1000));
    const key = Buffer.from(SECRET.replace(/^whsec_/, ''), 'base64');
    const signature = `v1,${createHmac('sha256', key).update(`${ID}.${timestamp}.${body}`).digest('base64')}`;
    const url = new URL('https://gw.example.com/upstream-webhooks/rep?task=t1');
    const refused = await webhook.receive({
      url,
      headers: headers({ 'webhook-timestamp': timestamp, 'webhook-signature': signature }),
      body,
    });
    expect(refused).toEqual({ accepted: false, status: 400, message: 'the webhook body nests deeper than 128 levels' });
  });

  test('five consecutive failures make a provider failing; one success resets it', () => {
    const health = new UpstreamHealth();
    for (let i = 0; i < 4; i++) health.failed('503 busy');
    expect(health.failing()).toBeUndefined();
    health.failed('503 busy');
    expect(health.failing()).toBe('5 consecutive upstream errors, last: 503 busy');
    health.succeeded();
    expect(health.failing()).toBeUndefined();
  });
});

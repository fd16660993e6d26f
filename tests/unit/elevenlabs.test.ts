import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import * as v from 'valibot';
import type { ProviderConfig } from '../../src/config/gateway-config.ts';
import { ProviderRequestError } from '../../providers/common/provider-request-error.ts';
import { ElevenLabsApi, elevenLabsMessage } from '../../providers/elevenlabs/elevenlabs-api.ts';
import { createElevenLabsProvider } from '../../providers/elevenlabs/index.ts';
import { ElevenLabsVoiceList } from '../../providers/elevenlabs/voice-list.ts';
import { UpstreamHealth } from '../../providers/common/upstream-health.ts';
import type { CustomVoiceRef, MediaJob, MediaModel, MediaValidationContext } from '../../providers/types.ts';
import { startFakeElevenLabs, type FakeElevenLabs } from '../helpers/fake-elevenlabs.ts';

/**
 * The `elevenlabs` adapter without a gateway, against the loopback fake of
 * tests/helpers/fake-elevenlabs.ts: error messages, the cached voice list, voice_id checks,
 * text to speech requests and voice cloning uploads.
 */

let fake: FakeElevenLabs;
let config: ProviderConfig;
beforeAll(async () => {
  fake = await startFakeElevenLabs();
  config = {
    id: 'eleven',
    kind: 'elevenlabs',
    base_url: fake.baseUrl,
    api_key: fake.apiKey,
    max_retries: 0,
    timeout_ms: 2000,
    missingEnv: [],
  };
});
afterAll(() => fake.stop());

const PREMADE = 'JBFqnCBsd6RMkjVDRZzb';

function tts(over: Partial<ProviderConfig> = {}): MediaModel {
  const model = createElevenLabsProvider({ ...config, ...over }).media?.model({
    id: 'eleven/v2',
    category: 'audio',
    display_name: 'v2',
    upstream_model: 'eleven_multilingual_v2',
    pricing: { per_1k_chars: 0.3 },
  });
  if (!model) throw new Error('no model');
  return model;
}

const ctx = (own: string[] = []): MediaValidationContext => ({
  accountId: 1,
  customVoice: async (id) => (own.includes(id) ? ({ voice_id: id, name: 'mine' } satisfies CustomVoiceRef) : undefined),
});

const job = (model: MediaModel, input: Record<string, unknown>): MediaJob => ({
  taskId: 't',
  model: { id: 'eleven/v2', upstreamModel: 'eleven_multilingual_v2' },
  input: v.parse(model.schema, input),
  signal: AbortSignal.timeout(10_000),
});

describe('elevenlabs error messages', () => {
  test('detail objects, validation lists, and anything else', () => {
    expect(
      elevenLabsMessage(
        '{"detail":{"status":"voice_not_found","message":"A voice with voice_id x was not found."}}',
        400,
      ),
    ).toBe('A voice with voice_id x was not found.');
    expect(elevenLabsMessage('{"detail":[{"loc":["body","text"],"msg":"Field required","type":"missing"}]}', 422)).toBe(
      'body.text: Field required',
    );
    expect(elevenLabsMessage('{"detail":"Not Found"}', 404)).toBe('Not Found');
    expect(elevenLabsMessage('upstream exploded', 502)).toBe('upstream exploded');
  });
});

describe('elevenlabs voice list', () => {
  test('maps voices to the API contract shape, leaves cloned ones out, caches, and serves a stale copy when the upstream fails', async () => {
    let now = 0;
    const api = new ElevenLabsApi(config, new UpstreamHealth());
    const list = new ElevenLabsVoiceList(api, { ttlMs: 1000, now: () => now });
    const calls = () => fake.requests.filter((r) => r.path === '/v1/voices').length;
    const before = calls();
    const voices = await list.voices();
    expect(voices.map((x) => x.voice_id)).toEqual([
      '21m00Tcm4TlvDq8ikWAM',
      'JBFqnCBsd6RMkjVDRZzb',
      '9BWtsMINqrJLrRacOk9x',
      'pqHfZKP75CvOlQylNhV4',
    ]);
    expect(voices[3]).toEqual({
      voice_id: 'pqHfZKP75CvOlQylNhV4',
      name: 'Bill',
      category: 'generated',
      labels: { accent: '', age: '', gender: 'male' },
      preview_url: '',
    });
    expect(await list.has('c38kUX8pkfYO2kHyqfFy')).toBe(false);
    expect(calls()).toBe(before + 1);
    now = 2000;
    await list.voices();
    expect(calls()).toBe(before + 2);

    const broken = new ElevenLabsVoiceList(new ElevenLabsApi({ ...config, api_key: 'wrong' }, new UpstreamHealth()));
    await expect(broken.voices()).rejects.toThrow('Invalid API key');
  });
});

describe('elevenlabs text to speech', () => {
  test("voice_id: a listed voice or the caller's own custom voice", async () => {
    const model = tts();
    expect(await model.validate?.({ text: 'hi', voice_id: PREMADE }, ctx())).toEqual([]);
    expect(
      await model.validate?.({ text: 'hi', voice_id: 'MyOwnClone0000000000' }, ctx(['MyOwnClone0000000000'])),
    ).toEqual([]);
    expect(await model.validate?.({ text: 'hi', voice_id: 'c38kUX8pkfYO2kHyqfFy' }, ctx())).toEqual([
      { path: 'voice_id', message: expect.stringMatching(/^unknown voice "c38kUX8pkfYO2kHyqfFy"/) },
    ]);
    expect(v.safeParse(model.schema, { text: 'hi' }).success).toBe(false);
  });

  test('an unavailable voice list is a 502 at creation, not a silent pass', async () => {
    const model = tts({ api_key: 'wrong' });
    const err = await model.validate?.({ text: 'hi', voice_id: PREMADE }, ctx()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderRequestError);
    expect((err as ProviderRequestError).status).toBe(502);
  });

  test('voice_id in the path, output_format in the query, model_id from the config', async () => {
    const model = tts();
    const text = 'unit: a pcm line';
    const step = await model.start(
      job(model, { text, voice_id: PREMADE, output_format: 'pcm_24000', voice_settings: { stability: 0.4 } }),
    );
    expect(step).toMatchObject({
      state: 'succeeded',
      outputs: [{ kind: 'audio', contentType: 'audio/L16; rate=24000; channels=1' }],
    });
    const [sent] = fake.find(text);
    expect(sent).toMatchObject({
      method: 'POST',
      path: `/v1/text-to-speech/${PREMADE}`,
      query: { output_format: 'pcm_24000' },
    });
    expect(sent?.body).toEqual({ text, voice_settings: { stability: 0.4 }, model_id: 'eleven_multilingual_v2' });
    expect(model.price({ text: 'x'.repeat(500) })).toBeCloseTo(0.15, 10);
  });

  test('an upstream refusal fails the step with its message', async () => {
    const model = tts();
    expect(await model.start(job(model, { text: 'unit: [reject] long', voice_id: PREMADE }))).toEqual({
      state: 'failed',
      message: 'eleven: You are sending too many characters in a single request. Split the text into smaller chunks.',
      detail: { upstream_status: 400 },
    });
  });
});

describe('elevenlabs voice cloning', () => {
  const wav = new Uint8Array([...new TextEncoder().encode('RIFF\0\0\0\0WAVEfmt '), ...new Uint8Array(100).fill(7)]);

  test('uploads the kept bytes as multipart files and answers the upstream voice id', async () => {
    const resources = createElevenLabsProvider({ ...config, options: { remove_background_noise: true } }).resources;
    const { voice_id } = (await resources?.createCustomVoice?.({
      accountId: 42,
      name: 'unit voice',
      samples: [
        {
          url: 'http://unused.invalid/a.wav',
          contentType: 'audio/wav',
          read: async () => new Response(wav).body ?? undefined,
        },
      ],
    })) ?? { voice_id: '' };
    const upload = fake.uploads.find((u) => u.voiceId === voice_id);
    expect(upload).toMatchObject({
      name: 'unit voice',
      description: 'Custom voice of gateway account 42',
      removeBackgroundNoise: 'true',
    });
    expect(upload?.files.map((f) => [f.fileName, f.type, Buffer.from(f.bytes).equals(Buffer.from(wav))])).toEqual([
      ['sample-1.wav', 'audio/wav', true],
    ]);
  });

  test('without a reader the kept copy is fetched from its URL', async () => {
    const host = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response(wav) });
    try {
      const resources = createElevenLabsProvider(config).resources;
      const { voice_id } = (await resources?.createCustomVoice?.({
        accountId: 1,
        name: 'from url',
        samples: [{ url: `http://127.0.0.1:${host.port}/files/x.wav`, contentType: 'audio/wav' }],
      })) ?? { voice_id: '' };
      expect(
        Buffer.from(fake.uploads.find((u) => u.voiceId === voice_id)?.files[0]?.bytes ?? []).equals(Buffer.from(wav)),
      ).toBe(true);
    } finally {
      host.stop(true);
    }
  });

  test('refusals: 422 for the samples, 502 for everything else', async () => {
    const sample = { url: 'x', contentType: 'audio/wav', read: async () => new Response(wav).body ?? undefined };
    const refused = await createElevenLabsProvider(config)
      .resources?.createCustomVoice?.({ accountId: 1, name: '[reject]', samples: [sample] })
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({
      status: 422,
      message: expect.stringMatching(/^samples: elevenlabs could not clone a voice from them: /),
    });
    const badKey = await createElevenLabsProvider({ ...config, api_key: 'wrong' })
      .resources?.createCustomVoice?.({ accountId: 1, name: 'x', samples: [sample] })
      .catch((e: unknown) => e);
    expect(badKey).toMatchObject({ status: 502, message: 'elevenlabs: Invalid API key' });
  });

  test('options.remove_background_noise must be a boolean', () => {
    expect(() => createElevenLabsProvider({ ...config, options: { remove_background_noise: 'yes' } })).toThrow(
      'remove_background_noise',
    );
  });
});

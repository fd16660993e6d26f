/**
 * A fake of the ElevenLabs API on loopback, answering with the documented shapes
 * (tests/fixtures/elevenlabs, each file citing its doc page). Every call needs `xi-api-key`.
 *
 * - `GET /v1/voices`: the recorded voice list, plus every voice cloned here (category `cloned`).
 *   @see https://elevenlabs.io/docs/api-reference/voices/get-all
 * - `POST /v1/voices/add`: multipart `name`, `files` (one or more), optional `description`,
 *   `remove_background_noise`; answers `{voice_id, requires_verification}`.
 *   @see https://elevenlabs.io/docs/api-reference/voices/ivc/create
 * - `POST /v1/text-to-speech/{voice_id}?output_format=…`: JSON `{text, model_id, …}`; the answer
 *   is the audio (`audio/mpeg` for the default `mp3_44100_128`). An unknown voice is a 400
 *   `voice_not_found`.
 *   @see https://elevenlabs.io/docs/api-reference/text-to-speech/convert
 *
 * Markers in the text (or a clone's name) pick a behaviour: `[reject]` → 400
 * `max_character_limit_exceeded` (a clone: 422 validation error), `[429-once]` → 429
 * `too_many_concurrent_requests` with `Retry-After: 1` on the first attempt, `[hang]` → never
 * answers. Requests, uploads and the bytes served are recorded for the tests.
 */
import { join } from 'node:path';
import { encodeWav } from '../../providers/sandbox/media/index.ts';

const FIXTURES = join(import.meta.dir, '../fixtures/elevenlabs');
const fixture = async (name: string) => JSON.parse(await Bun.file(join(FIXTURES, name)).text());

export interface ElevenLabsRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  body: any;
  at: number;
}

export interface ElevenLabsUpload {
  name: string;
  description: string | null;
  removeBackgroundNoise: string | null;
  files: Array<{ fileName: string; type: string; bytes: Uint8Array }>;
  voiceId: string;
}

export interface FakeElevenLabs {
  /** API root without `/v1`, as the gateway config's `base_url`. */
  baseUrl: string;
  apiKey: string;
  requests: ElevenLabsRequest[];
  uploads: ElevenLabsUpload[];
  /** Audio served, by the text that asked for it. */
  served: Map<string, Uint8Array>;
  /** Text-to-speech requests whose text contains `marker`. */
  find(marker: string): ElevenLabsRequest[];
  stop(): void;
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

/** ElevenLabs ids: 20 characters of [A-Za-z0-9]. */
function voiceId(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  return [...crypto.getRandomValues(new Uint8Array(20))].map((b) => alphabet[b % alphabet.length]).join('');
}

/** Audio in the asked `output_format`: MP3 frames behind an ID3 tag, raw PCM, or a WAV file. */
function audioFor(text: string, format: string): { bytes: Uint8Array; type: string } {
  const [codec, rate] = format.split('_');
  if (codec === 'pcm') {
    const samples = new Int16Array(Number(rate) / 10);
    for (let i = 0; i < samples.length; i++) samples[i] = Math.round(8000 * Math.sin(i / 8));
    return { bytes: new Uint8Array(samples.buffer), type: 'audio/pcm' };
  }
  if (codec === 'wav') {
    const samples = new Int16Array(1600).map((_, i) => Math.round(6000 * Math.sin(i / 5)));
    return { bytes: encodeWav(samples, Number(rate)), type: 'audio/wav' };
  }
  const bytes = crypto.getRandomValues(new Uint8Array(2000 + [...text].length * 40));
  bytes.set([0x49, 0x44, 0x33, 0x04, 0, 0, 0, 0, 0, 0], 0);
  return { bytes, type: 'audio/mpeg' };
}

export async function startFakeElevenLabs(apiKey = 'xi-fake-0123456789abcdef'): Promise<FakeElevenLabs> {
  const [voices, addAnswer, notFound, maxChars, tooMany, badKey, validation] = await Promise.all(
    [
      'voices.json',
      'voices-add.json',
      'error-voice-not-found.json',
      'error-max-characters.json',
      'error-too-many-concurrent.json',
      'error-invalid-api-key.json',
      'error-validation.json',
    ].map(fixture),
  );
  const requests: ElevenLabsRequest[] = [];
  const uploads: ElevenLabsUpload[] = [];
  const served = new Map<string, Uint8Array>();
  const cloned: any[] = [];
  const attempts = new Map<string, number>();
  const known = (id: string) =>
    voices.voices.some((v: { voice_id: string }) => v.voice_id === id) || cloned.some((v) => v.voice_id === id);

  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    idleTimeout: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const record: ElevenLabsRequest = {
        method: req.method,
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: Object.fromEntries(req.headers),
        body: undefined,
        at: Date.now(),
      };
      requests.push(record);
      if (req.headers.get('xi-api-key') !== apiKey) return json(401, badKey);

      if (req.method === 'GET' && url.pathname === '/v1/voices')
        return json(200, { voices: [...voices.voices, ...cloned] });

      if (req.method === 'POST' && url.pathname === '/v1/voices/add') {
        const raw = new Uint8Array(await req.arrayBuffer());
        const form = await new Response(raw, {
          headers: { 'content-type': req.headers.get('content-type') ?? '' },
        }).formData();
        const name = form.get('name');
        const files = form.getAll('files').filter((f): f is File => f instanceof File);
        // Each file part's Content-Type as sent (a parsed File may normalise it, e.g. audio/x-wav).
        const partTypes = [
          ...Buffer.from(raw)
            .toString('latin1')
            .matchAll(/name="files"; filename="[^"]*"\r\nContent-Type: ([^\r\n]+)/g),
        ].map((m) => m[1] as string);
        record.body = { name, files: files.length };
        if (typeof name !== 'string' || files.length === 0)
          return json(422, {
            detail: [
              { loc: ['body', typeof name === 'string' ? 'files' : 'name'], msg: 'Field required', type: 'missing' },
            ],
          });
        if (name.includes('[reject]')) return json(422, validation);
        const id = voiceId();
        uploads.push({
          name,
          description: (form.get('description') as string | null) ?? null,
          removeBackgroundNoise: (form.get('remove_background_noise') as string | null) ?? null,
          files: await Promise.all(
            files.map(async (f, i) => ({
              fileName: f.name,
              type: partTypes[i] ?? '',
              bytes: new Uint8Array(await f.arrayBuffer()),
            })),
          ),
          voiceId: id,
        });
        cloned.push({ ...voices.voices.at(-1), voice_id: id, name, category: 'cloned' });
        return json(200, { ...addAnswer, voice_id: id });
      }

      const tts = /^\/v1\/text-to-speech\/([^/]+)$/.exec(url.pathname);
      if (req.method === 'POST' && tts) {
        const body = await req.json().catch(() => undefined);
        record.body = body;
        if (typeof body?.text !== 'string')
          return json(422, { detail: [{ loc: ['body', 'text'], msg: 'Field required', type: 'missing' }] });
        const text: string = body.text;
        const attempt = (attempts.get(text) ?? 0) + 1;
        attempts.set(text, attempt);
        if (text.includes('[hang]')) {
          await new Promise<void>((resolve) => req.signal.addEventListener('abort', () => resolve(), { once: true }));
          return new Response(null, { status: 499 });
        }
        const voice = decodeURIComponent(tts[1] as string);
        if (!known(voice))
          return json(400, {
            detail: { ...notFound.detail, message: notFound.detail.message.replace('VOICE_ID', voice) },
          });
        if (text.includes('[reject]')) return json(400, maxChars);
        if (text.includes('[429-once]') && attempt === 1) return json(429, tooMany, { 'retry-after': '1' });
        const { bytes, type } = audioFor(text, url.searchParams.get('output_format') ?? 'mp3_44100_128');
        served.set(text, bytes);
        return new Response(bytes as Uint8Array<ArrayBuffer>, {
          headers: { 'content-type': type, 'request-id': voiceId(), 'character-cost': String([...text].length) },
        });
      }
      return json(404, { detail: 'Not Found' });
    },
  });

  return {
    baseUrl: `http://127.0.0.1:${server.port}`,
    apiKey,
    requests,
    uploads,
    served,
    find: (marker) => requests.filter((r) => typeof r.body?.text === 'string' && r.body.text.includes(marker)),
    stop: () => server.stop(true),
  };
}

/**
 * A fake of OpenAI's synchronous media endpoints on loopback, answering with the documented
 * shapes (tests/fixtures/openai-media, each file citing its doc page):
 *
 * - `POST /v1/images/generations`: GPT image models (`gpt-image-*`) answer `b64_json` only;
 *   DALL·E answers `url` unless `response_format: b64_json`. Images are real PNGs, distinct per
 *   request and index; URL images are served by this fake under `/images/…`.
 *   @see https://platform.openai.com/docs/api-reference/images/create
 * - `POST /v1/audio/speech`: the audio bytes in the asked `response_format`.
 *   @see https://platform.openai.com/docs/api-reference/audio/createSpeech
 *
 * Markers in the prompt or text pick a behaviour: `[reject]` → 400 (content policy), `[429-once]`
 * → 429 with `Retry-After: 1` on the first attempt, `[hang]` → never answers, `[fewer]` → one
 * image whatever `n` asked, `[stall-body]` → 200 and a body that never ends (a space every
 * 500 ms), `[gone-url]` → image URLs that answer 404. Every request is recorded, and every byte served is kept for tests to
 * compare with what the gateway stored.
 */
import { join } from 'node:path';
import { encodePng } from '../../providers/sandbox/media/index.ts';
import { sandboxSpeech } from '../../providers/sandbox/media/index.ts';

const FIXTURES = join(import.meta.dir, '../fixtures/openai-media');
const fixture = async (name: string) => JSON.parse(await Bun.file(join(FIXTURES, name)).text());

export interface OpenAIMediaRequest {
  path: string;
  headers: Record<string, string>;
  body: any;
  at: number;
}

export interface FakeOpenAIMedia {
  baseUrl: string;
  apiKey: string;
  requests: OpenAIMediaRequest[];
  /** Bytes of every file served, by the prompt or text that asked for them, in order. */
  served: Map<string, Uint8Array[]>;
  /** Requests whose prompt or text contains `marker`. */
  find(marker: string): OpenAIMediaRequest[];
  stop(): void;
}

/** A PNG whose colours depend on the prompt and the image's index: each output is distinct. */
function pngFor(prompt: string, index: number): Uint8Array {
  const seed = Number(Bun.hash.crc32(`${prompt}#${index}`) >>> 0);
  return encodePng(24 + index, 16, (x, y) => [
    (seed + x * 7) & 0xff,
    ((seed >> 8) + y * 5) & 0xff,
    ((seed >> 16) + index * 40) & 0xff,
  ]);
}

/** Bytes that sniff as the asked format: real signatures, then noise. */
function audioFor(text: string, format: string): { bytes: Uint8Array; type: string } {
  const noise = (head: number[], size = 3000) => {
    const out = crypto.getRandomValues(new Uint8Array(size));
    out.set(head, 0);
    return out;
  };
  switch (format) {
    case 'wav':
      return { bytes: sandboxSpeech(text), type: 'audio/wav' };
    case 'opus':
      return { bytes: noise([...'OggS'].map((c) => c.charCodeAt(0)).concat([0, 2])), type: 'audio/ogg' };
    case 'flac':
      return { bytes: noise([...'fLaC'].map((c) => c.charCodeAt(0)).concat([0, 0, 0, 0x22])), type: 'audio/flac' };
    case 'aac':
      return { bytes: noise([0xff, 0xf1, 0x50, 0x80]), type: 'audio/aac' };
    case 'pcm':
      return { bytes: new Uint8Array(4800), type: 'audio/pcm' };
    default:
      return { bytes: noise([0x49, 0x44, 0x33, 0x04, 0, 0, 0, 0, 0, 0]), type: 'audio/mpeg' };
  }
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

export async function startFakeOpenAIMedia(apiKey = 'sk-fake-media-0123456789'): Promise<FakeOpenAIMedia> {
  const [b64Answer, urlAnswer, contentPolicy, rateLimit, badKey, badVoice] = await Promise.all(
    [
      'images-gpt-image-b64.json',
      'images-dall-e-url.json',
      'error-content-policy.json',
      'error-rate-limit.json',
      'error-invalid-api-key.json',
      'error-speech-invalid-voice.json',
    ].map(fixture),
  );
  const requests: OpenAIMediaRequest[] = [];
  const served = new Map<string, Uint8Array[]>();
  const hosted = new Map<string, Uint8Array>();
  const attempts = new Map<string, number>();
  let hostedSeq = 0;

  const keep = (key: string, bytes: Uint8Array) => served.set(key, [...(served.get(key) ?? []), bytes]);

  const server: ReturnType<typeof Bun.serve> = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    idleTimeout: 0,
    async fetch(req): Promise<Response> {
      const url = new URL(req.url);
      if (req.method === 'GET' && url.pathname.startsWith('/images/')) {
        const bytes = hosted.get(url.pathname);
        return bytes
          ? new Response(bytes as Uint8Array<ArrayBuffer>, { headers: { 'content-type': 'image/png' } })
          : new Response('not found', { status: 404 });
      }
      const body = await req.json().catch(() => undefined);
      requests.push({ path: url.pathname, headers: Object.fromEntries(req.headers), body, at: Date.now() });
      if (req.headers.get('authorization') !== `Bearer ${apiKey}`) return json(401, badKey);
      const marker = String(body?.prompt ?? body?.input ?? '');
      const attempt = (attempts.get(marker) ?? 0) + 1;
      attempts.set(marker, attempt);
      if (marker.includes('[hang]')) {
        await new Promise<void>((resolve) => req.signal.addEventListener('abort', () => resolve(), { once: true }));
        return new Response(null, { status: 499 });
      }
      if (marker.includes('[stall-body]')) {
        let timer: ReturnType<typeof setInterval> | undefined;
        const body = new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode('{"data":['));
            timer = setInterval(() => controller.enqueue(new TextEncoder().encode(' ')), 500);
          },
          cancel: () => clearInterval(timer),
        });
        req.signal.addEventListener('abort', () => clearInterval(timer), { once: true });
        return new Response(body, { headers: { 'content-type': 'application/json' } });
      }
      if (marker.includes('[reject]')) return json(400, contentPolicy);
      if (marker.includes('[429-once]') && attempt === 1) return json(429, rateLimit, { 'retry-after': '1' });

      if (url.pathname === '/v1/images/generations') {
        if (typeof body?.prompt !== 'string' || typeof body?.model !== 'string')
          return json(400, {
            error: {
              message: "Missing required parameter: 'prompt'.",
              type: 'invalid_request_error',
              param: 'prompt',
              code: 'missing_required_parameter',
            },
          });
        const gptImage = body.model.startsWith('gpt-image');
        if (gptImage && body.response_format !== undefined)
          return json(400, {
            error: {
              message: "Unknown parameter: 'response_format'.",
              type: 'invalid_request_error',
              param: 'response_format',
              code: 'unknown_parameter',
            },
          });
        const count = marker.includes('[fewer]') ? 1 : Number(body.n ?? 1);
        const base64 = gptImage || body.response_format === 'b64_json';
        const data = Array.from({ length: count }, (_, i): Record<string, string> => {
          const png = pngFor(marker, i);
          keep(marker, png);
          if (base64) return { b64_json: Buffer.from(png).toString('base64') };
          const path = `/images/img-${++hostedSeq}.png`;
          if (!marker.includes('[gone-url]')) hosted.set(path, png);
          return {
            url: `http://127.0.0.1:${server.port}${path}?se=2030-01-01&sig=fake`,
            revised_prompt: urlAnswer.data[0].revised_prompt,
          };
        });
        return json(200, {
          ...(base64 && gptImage ? b64Answer : urlAnswer),
          created: Math.floor(Date.now() / 1000),
          data,
        });
      }
      if (url.pathname === '/v1/audio/speech') {
        if (typeof body?.input !== 'string' || typeof body?.model !== 'string')
          return json(400, {
            error: {
              message: "Missing required parameter: 'input'.",
              type: 'invalid_request_error',
              param: 'input',
              code: 'missing_required_parameter',
            },
          });
        if (body.voice === 'nobody') return json(400, badVoice);
        const { bytes, type } = audioFor(body.input, String(body.response_format ?? 'mp3'));
        keep(marker, bytes);
        return new Response(bytes as Uint8Array<ArrayBuffer>, { headers: { 'content-type': type } });
      }
      return json(404, {
        error: {
          message: `Invalid URL (${req.method} ${url.pathname})`,
          type: 'invalid_request_error',
          param: null,
          code: null,
        },
      });
    },
  });

  return {
    baseUrl: `http://127.0.0.1:${server.port}/v1`,
    apiKey,
    requests,
    served,
    find: (marker) => requests.filter((r) => String(r.body?.prompt ?? r.body?.input ?? '').includes(marker)),
    stop: () => server.stop(true),
  };
}

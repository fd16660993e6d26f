import { recordRequest, type Recorded } from './recorded-request.ts';
import { join } from 'node:path';
import type { Server } from 'bun';
import { createHmac } from 'node:crypto';

/**
 * A fake Replicate on loopback that answers the predictions API the way Replicate documents it
 * (fixture shapes in tests/fixtures/replicate, one file per documented response), serves the
 * output files itself and sends signed `completed` webhooks like Replicate does.
 * @see https://replicate.com/docs/reference/http
 * @see https://replicate.com/docs/topics/webhooks
 *
 * What a prediction does is chosen by its input's `scenario` (the gateway passes unknown input
 * fields through):
 * - `success` (default): processing on the first poll, then succeeded with `num_outputs` files
 *   (a list; `output_shape: string | object` for a bare URL or `{image: url}`)
 * - `fewer`: succeeds with one file less than asked (the rest is refunded)
 * - `fail`: failed with the fixture's error text; `canceled`: canceled upstream
 * - `never`: processing for ever (deadlines)
 * - `create-429` / `poll-429`: the first create / poll answers 429 with `Retry-After: 1`
 * - `poll-500`: the first poll answers 500
 * - `bad-input`: the create answers 422 (problem details)
 * - `webhook`: processing on every poll; finishes only by `finish(id)` (which sends the webhook)
 * - `hostile-error`: failed with error text holding a NUL and an unpaired surrogate (what Postgres
 *   cannot store)
 * - `deep-output`: succeeded with its file URL nested `DEEP_OUTPUT_LEVELS` lists deep (parses, but
 *   no recursive walk or `JSON.stringify` gets through it)
 */

export const DEEP_OUTPUT_LEVELS = 100_000;
export const HOSTILE_ERROR = 'model crashed:\u0000 half a pair \ud800 here';

const FIXTURES = join(import.meta.dir, '../fixtures/replicate');
export const FAKE_REPLICATE_TOKEN = 'r8_fake_token_0123456789';
export const FAKE_REPLICATE_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

async function fixture(name: string): Promise<Record<string, any>> {
  const { _doc, ...body } = (await Bun.file(join(FIXTURES, `${name}.json`)).json()) as Record<string, any>;
  void _doc;
  return body;
}

export interface FakePrediction {
  id: string;
  createdVia: string;
  version?: string;
  input: Record<string, any>;
  webhook?: string;
  webhookFilter?: string[];
  status: string;
  output: unknown;
  error: string | null;
  polls: number;
  /** File names of the outputs, once produced. */
  files: string[];
  cancelRequests: number;
}

export interface WebhookSend {
  status: number;
  body: string;
}

/** Pauses GETs of one prediction until released; `arrived` resolves when one is waiting. */
interface Hold {
  arrived: Promise<void>;
  release: (answer: 'processing' | 'succeeded') => void;
}

export interface FakeReplicate {
  /** `base_url` for the gateway config (`…/v1`). */
  url: string;
  origin: string;
  requests: Recorded[];
  predictions: Map<string, FakePrediction>;
  files: Map<string, Uint8Array<ArrayBuffer>>;
  /** Predictions by the task id in their webhook URL, or by a prompt. */
  byPrompt(prompt: string): FakePrediction | undefined;
  waitFor(prompt: string, timeoutMs?: number): Promise<FakePrediction>;
  /** Makes a prediction succeed now and (when it has a webhook) sends the `completed` webhook. */
  finish(id: string, opts?: { sendWebhook?: boolean }): Promise<WebhookSend | undefined>;
  /** Sends (again) the `completed` webhook of a prediction; `badSignature` signs with another key. */
  sendWebhook(id: string, opts?: { badSignature?: boolean; webhookId?: string }): Promise<WebhookSend>;
  /** Holds the next GET of a prediction until released. */
  holdNextPoll(id: string): Hold;
  stop(): void;
}

function pngLike(seed: string): Uint8Array<ArrayBuffer> {
  // A PNG signature then bytes unique to this file: enough to be sniffed as image/png and to be
  // compared byte for byte after the gateway copied it.
  const body = new Uint8Array(4096 + (seed.length % 97));
  body.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const random = crypto.getRandomValues(new Uint8Array(body.length - 8));
  body.set(random, 8);
  return body;
}

/** Signs as Replicate documents it (written here independently of the gateway's verifier). */
function sign(secret: string, id: string, timestamp: string, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

let counter = 0;
const newId = () =>
  `fake${Date.now().toString(36)}${(counter++).toString(36)}${Math.random().toString(36).slice(2, 8)}`.slice(0, 26);

export async function startFakeReplicate(opts: { token?: string; secret?: string } = {}): Promise<FakeReplicate> {
  const token = opts.token ?? FAKE_REPLICATE_TOKEN;
  const secret = opts.secret ?? FAKE_REPLICATE_SECRET;
  const requests: Recorded[] = [];
  const predictions = new Map<string, FakePrediction>();
  const files = new Map<string, Uint8Array<ArrayBuffer>>();
  const scenarioHits = new Map<string, number>();
  const holds = new Map<string, { arrivedResolve: () => void; answer: Promise<'processing' | 'succeeded'> }>();
  const templates = {
    starting: await fixture('prediction-starting'),
    processing: await fixture('prediction-processing'),
    succeeded: await fixture('prediction-succeeded'),
    failed: await fixture('prediction-failed'),
    canceled: await fixture('prediction-canceled'),
    error422: await fixture('error-422'),
    error429: await fixture('error-429'),
  };
  let origin = '';

  const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
    new Response(JSON.stringify(body), {
      status,
      headers: { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json', ...headers },
    });

  const produce = (p: FakePrediction) => {
    const asked = Math.max(1, Number(p.input.num_outputs ?? 1));
    const count = p.input.scenario === 'fewer' ? Math.max(1, asked - 1) : asked;
    p.files = Array.from({ length: count }, (_, i) => `${p.id}-out-${i}.png`);
    for (const name of p.files) files.set(name, pngLike(name));
    const urls = p.files.map((name) => `${origin}/files/${name}`);
    p.output =
      p.input.output_shape === 'string' ? urls[0] : p.input.output_shape === 'object' ? { image: urls[0] } : urls;
    p.status = 'succeeded';
  };

  /** The prediction in the documented shape of its status. */
  const view = (p: FakePrediction) => {
    const template = (templates as Record<string, Record<string, any>>)[p.status] ?? templates.processing;
    return {
      ...template,
      id: p.id,
      version: p.version ?? template.version,
      model: p.createdVia.startsWith('/v1/models/') ? p.createdVia.split('/').slice(3, 5).join('/') : template.model,
      input: p.input,
      output: p.status === 'succeeded' ? p.output : null,
      error: p.status === 'failed' ? (p.input.scenario === 'hostile-error' ? HOSTILE_ERROR : template.error) : null,
      urls: { get: `${origin}/v1/predictions/${p.id}`, cancel: `${origin}/v1/predictions/${p.id}/cancel` },
    };
  };

  const firstTime = (key: string) => {
    const n = (scenarioHits.get(key) ?? 0) + 1;
    scenarioHits.set(key, n);
    return n === 1;
  };

  const create = (path: string, body: any): Response => {
    const input = (body?.input ?? {}) as Record<string, any>;
    const scenario = String(input.scenario ?? 'success');
    if (scenario === 'bad-input') return json(templates.error422, 422);
    if (scenario === 'create-429' && firstTime(`create:${input.prompt}`))
      return json(templates.error429, 429, { 'retry-after': '1' });
    const p: FakePrediction = {
      id: newId(),
      createdVia: path,
      version: body?.version,
      input,
      webhook: body?.webhook,
      webhookFilter: body?.webhook_events_filter,
      status: 'starting',
      output: null,
      error: null,
      polls: 0,
      files: [],
      cancelRequests: 0,
    };
    predictions.set(p.id, p);
    return json(view(p), 201);
  };

  const poll = async (p: FakePrediction): Promise<Response> => {
    const hold = holds.get(p.id);
    if (hold) {
      holds.delete(p.id);
      hold.arrivedResolve();
      const answer = await hold.answer;
      if (answer === 'succeeded' && p.status !== 'succeeded') produce(p);
      // `processing`: the state as it was when this poll was read, before the prediction ended.
      return json(
        answer === 'processing'
          ? { ...view(p), ...templates.processing, id: p.id, input: p.input, urls: view(p).urls }
          : view(p),
      );
    }
    const scenario = String(p.input.scenario ?? 'success');
    if (scenario === 'poll-429' && firstTime(`poll:${p.id}`))
      return json(templates.error429, 429, { 'retry-after': '1' });
    if (scenario === 'poll-500' && firstTime(`poll:${p.id}`))
      return json({ title: 'Internal Server Error', detail: 'upstream hiccup', status: 500 }, 500);
    p.polls++;
    if (p.status === 'starting' || p.status === 'processing') {
      if (scenario === 'never' || scenario === 'webhook') p.status = 'processing';
      else if (p.polls === 1) p.status = 'processing';
      else if (scenario === 'fail' || scenario === 'hostile-error') p.status = 'failed';
      else if (scenario === 'canceled') p.status = 'canceled';
      else produce(p);
    }
    if (scenario === 'deep-output' && p.status === 'succeeded') {
      // Written by hand: JSON.stringify itself cannot go this deep.
      const url = JSON.stringify(`${origin}/files/${p.files[0]}`);
      const deep = '['.repeat(DEEP_OUTPUT_LEVELS) + url + ']'.repeat(DEEP_OUTPUT_LEVELS);
      const text = JSON.stringify({ ...view(p), output: '@deep@' }).replace('"@deep@"', deep);
      return new Response(text, { headers: { 'content-type': 'application/json' } });
    }
    return json(view(p));
  };

  const sendWebhook = async (
    id: string,
    o: { badSignature?: boolean; webhookId?: string } = {},
  ): Promise<WebhookSend> => {
    const p = predictions.get(id);
    if (!p?.webhook) throw new Error(`prediction ${id} has no webhook`);
    const body = JSON.stringify(view(p));
    const webhookId = o.webhookId ?? `msg_${crypto.randomUUID()}`;
    const timestamp = String(Math.floor(Date.now() / 1000));
    const signature = sign(
      o.badSignature ? 'whsec_d3Jvbmcgc2VjcmV0IGZvciB0ZXN0cw==' : secret,
      webhookId,
      timestamp,
      body,
    );
    const res = await fetch(p.webhook, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': webhookId,
        'webhook-timestamp': timestamp,
        'webhook-signature': signature,
      },
      body,
    });
    return { status: res.status, body: await res.text() };
  };

  const server: Server<undefined> = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const url = new URL(req.url);
      const { body } = await recordRequest(req, requests);

      const file = /^\/files\/([^/]+)$/.exec(url.pathname);
      if (file && req.method === 'GET') {
        const bytes = files.get(file[1]!);
        return bytes
          ? new Response(bytes, { headers: { 'content-type': 'image/png' } })
          : new Response('no such file', { status: 404 });
      }
      if (req.headers.get('authorization') !== `Bearer ${token}`) {
        return json(
          { title: 'Unauthenticated', detail: 'You did not pass a valid authentication token', status: 401 },
          401,
        );
      }
      if (
        req.method === 'POST' &&
        (url.pathname === '/v1/predictions' ||
          /^\/v1\/(models|deployments)\/[^/]+\/[^/]+\/predictions$/.test(url.pathname))
      ) {
        return create(url.pathname, body);
      }
      const get = /^\/v1\/predictions\/([^/]+)$/.exec(url.pathname);
      if (get && req.method === 'GET') {
        const p = predictions.get(get[1]!);
        return p ? poll(p) : json({ title: 'Not found', detail: 'Not found.', status: 404 }, 404);
      }
      const cancel = /^\/v1\/predictions\/([^/]+)\/cancel$/.exec(url.pathname);
      if (cancel && req.method === 'POST') {
        const p = predictions.get(cancel[1]!);
        if (!p) return json({ title: 'Not found', detail: 'Not found.', status: 404 }, 404);
        p.cancelRequests++;
        if (p.status === 'starting' || p.status === 'processing') p.status = 'canceled';
        return json(view(p));
      }
      return json({ title: 'Not found', detail: `no route ${req.method} ${url.pathname}`, status: 404 }, 404);
    },
  });
  origin = `http://127.0.0.1:${server.port}`;

  const byPrompt = (prompt: string) => [...predictions.values()].find((p) => p.input.prompt === prompt);
  return {
    url: `${origin}/v1`,
    origin,
    requests,
    predictions,
    files,
    byPrompt,
    async waitFor(prompt, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const p = byPrompt(prompt);
        if (p) return p;
        if (Date.now() > deadline) throw new Error(`no prediction for prompt ${prompt}`);
        await Bun.sleep(20);
      }
    },
    async finish(id, o = {}) {
      const p = predictions.get(id);
      if (!p) throw new Error(`no prediction ${id}`);
      produce(p);
      return o.sendWebhook === false || !p.webhook ? undefined : sendWebhook(id);
    },
    sendWebhook,
    holdNextPoll(id) {
      let arrivedResolve!: () => void;
      let release!: (answer: 'processing' | 'succeeded') => void;
      const arrived = new Promise<void>((resolve) => (arrivedResolve = resolve));
      const answer = new Promise<'processing' | 'succeeded'>((resolve) => (release = resolve));
      holds.set(id, { arrivedResolve, answer });
      return { arrived, release };
    },
    stop: () => server.stop(true),
  };
}

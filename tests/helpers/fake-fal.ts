import { recordRequest, type Recorded } from './recorded-request.ts';
import { join } from 'node:path';
import type { Server } from 'bun';

/**
 * A fake fal queue on loopback answering as fal documents it (fixture shapes in
 * tests/fixtures/fal): submit to `/{model_id}`, then status, result and cancel under
 * `/{app id}/requests/{request_id}` (the model id's subpath dropped), output files served here.
 * @see https://docs.fal.ai/model-endpoints/queue
 *
 * What a request does is chosen by its input's `scenario`:
 * - `success` (default): IN_QUEUE, IN_PROGRESS, then COMPLETED with `num_images` images (or a
 *   video for video models: `kind: video` in the fake's model table)
 * - `model-error`: COMPLETED, and the result is the documented 422 model error
 * - `request-error`: COMPLETED, and the result is a 504 request error with `X-Fal-Error-Type`
 * - `status-error`: COMPLETED with an `error` in the status itself
 * - `never`: IN_PROGRESS for ever (deadlines)
 * - `submit-429`: the first submit answers 429 with `Retry-After: 1`
 * - `status-503`: the first status answers 503 (no fal error body: the queue's own hiccup)
 * - `slow-submit`: the submit makes its job at once and answers 1.5 s later (a gateway stopping
 *   meanwhile must not lose the job's id and submit it again)
 */

const FIXTURES = join(import.meta.dir, '../fixtures/fal');
export const FAKE_FAL_KEY = 'fal-key-id:fal-key-secret-0123456789';

async function fixture(name: string): Promise<Record<string, any>> {
  const { _doc, ...body } = (await Bun.file(join(FIXTURES, `${name}.json`)).json()) as Record<string, any>;
  void _doc;
  return body;
}

export interface FakeFalRequest {
  id: string;
  modelId: string;
  appId: string;
  input: Record<string, any>;
  statusPolls: number;
  state: 'IN_QUEUE' | 'IN_PROGRESS' | 'COMPLETED' | 'CANCELLED';
  files: string[];
  cancelRequests: number;
}

export interface FakeFal {
  url: string;
  requests: Recorded[];
  jobs: Map<string, FakeFalRequest>;
  files: Map<string, Uint8Array<ArrayBuffer>>;
  byPrompt(prompt: string): FakeFalRequest | undefined;
  stop(): void;
}

function fileBytes(name: string, kind: 'image' | 'video'): Uint8Array<ArrayBuffer> {
  const body = new Uint8Array(3000 + (name.length % 89));
  // PNG signature, or an ISO-BMFF `ftyp` box: sniffed as such; the rest random, compared byte for byte.
  if (kind === 'image') body.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  else body.set([0, 0, 0, 24, 0x66, 0x74, 0x79, 0x70, 0x69, 0x73, 0x6f, 0x6d]);
  body.set(crypto.getRandomValues(new Uint8Array(body.length - 12)), 12);
  return body;
}

export async function startFakeFal(opts: { key?: string; videoModels?: string[] } = {}): Promise<FakeFal> {
  const key = opts.key ?? FAKE_FAL_KEY;
  const videoModels = new Set(opts.videoModels ?? []);
  const requests: Recorded[] = [];
  const jobs = new Map<string, FakeFalRequest>();
  const files = new Map<string, Uint8Array<ArrayBuffer>>();
  const hits = new Map<string, number>();
  const t = {
    submit: await fixture('submit'),
    inQueue: await fixture('status-in-queue'),
    inProgress: await fixture('status-in-progress'),
    completed: await fixture('status-completed'),
    images: await fixture('result-images'),
    video: await fixture('result-video'),
    modelError: await fixture('error-model-422'),
    requestError: await fixture('error-request-504'),
    cancelRequested: await fixture('cancel-requested'),
    alreadyCompleted: await fixture('cancel-already-completed'),
    error429: await fixture('error-429'),
  };
  let origin = '';
  const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
  const firstTime = (k: string) => {
    const n = (hits.get(k) ?? 0) + 1;
    hits.set(k, n);
    return n === 1;
  };
  const base = (job: FakeFalRequest) => `${origin}/${job.appId}/requests/${job.id}`;

  const result = (job: FakeFalRequest): Response => {
    const scenario = String(job.input.scenario ?? 'success');
    if (scenario === 'model-error') return json(t.modelError, 422, { 'x-fal-retryable': 'false' });
    if (scenario === 'request-error') return json(t.requestError, 504, { 'x-fal-error-type': 'request_timeout' });
    if (job.files.length === 0) {
      const video = videoModels.has(job.modelId);
      const count = video ? 1 : Math.max(1, Number(job.input.num_images ?? 1));
      job.files = Array.from({ length: count }, (_, i) => `${job.id}-${i}.${video ? 'mp4' : 'png'}`);
      for (const name of job.files) files.set(name, fileBytes(name, video ? 'video' : 'image'));
    }
    if (videoModels.has(job.modelId))
      return json({
        ...t.video,
        video: { ...t.video.video, url: `${origin}/files/${job.files[0]}`, file_name: job.files[0] },
      });
    return json({
      ...t.images,
      prompt: job.input.prompt,
      images: job.files.map((name) => ({ ...t.images.images[0], url: `${origin}/files/${name}` })),
    });
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
        return bytes ? new Response(bytes) : new Response('no such file', { status: 404 });
      }
      if (req.headers.get('authorization') !== `Key ${key}`) return json({ detail: 'Unauthorized' }, 401);

      const m = /^\/(.+)\/requests\/([^/]+)(\/status|\/cancel)?$/.exec(url.pathname);
      if (m) {
        const job = jobs.get(m[2]!);
        if (!job || job.appId !== m[1]) return json({ detail: 'Request not found' }, 404);
        if (m[3] === '/status' && req.method === 'GET') {
          const scenario = String(job.input.scenario ?? 'success');
          if (scenario === 'status-503' && firstTime(`status:${job.id}`))
            return new Response('<html>503 Service Unavailable</html>', { status: 503 });
          job.statusPolls++;
          if (job.state !== 'CANCELLED' && job.state !== 'COMPLETED') {
            if (scenario === 'never') job.state = 'IN_PROGRESS';
            else job.state = job.statusPolls === 1 ? 'IN_QUEUE' : job.statusPolls === 2 ? 'IN_PROGRESS' : 'COMPLETED';
          }
          if (job.state === 'IN_QUEUE') return json({ ...t.inQueue, response_url: base(job) }, 202);
          if (job.state === 'IN_PROGRESS' || job.state === 'CANCELLED')
            return json({ ...t.inProgress, response_url: base(job) }, 202);
          if (scenario === 'status-error')
            return json({
              ...t.completed,
              response_url: base(job),
              error: 'Internal error while running the model',
              error_type: 'runner_server_error',
            });
          return json({ ...t.completed, response_url: base(job) });
        }
        if (m[3] === '/cancel' && req.method === 'PUT') {
          job.cancelRequests++;
          if (job.state === 'COMPLETED') return json(t.alreadyCompleted, 400);
          job.state = 'CANCELLED';
          return json(t.cancelRequested, 202);
        }
        if (!m[3] && req.method === 'GET') {
          if (job.state !== 'COMPLETED') return json({ detail: 'Request is still in progress' }, 400);
          return result(job);
        }
      }
      if (req.method === 'POST') {
        const modelId = url.pathname.slice(1);
        const input = (body ?? {}) as Record<string, any>;
        if (input.scenario === 'submit-429' && firstTime(`submit:${input.prompt}`))
          return json(t.error429, 429, { 'retry-after': '1' });
        const id = crypto.randomUUID();
        const appId = modelId.split('/').slice(0, 2).join('/');
        const job: FakeFalRequest = {
          id,
          modelId,
          appId,
          input,
          statusPolls: 0,
          state: 'IN_QUEUE',
          files: [],
          cancelRequests: 0,
        };
        jobs.set(id, job);
        if (input.scenario === 'slow-submit') await Bun.sleep(1500);
        return json({
          ...t.submit,
          request_id: id,
          response_url: base(job),
          status_url: `${base(job)}/status`,
          cancel_url: `${base(job)}/cancel`,
        });
      }
      return json({ detail: `no route ${req.method} ${url.pathname}` }, 404);
    },
  });
  origin = `http://127.0.0.1:${server.port}`;
  return {
    url: origin,
    requests,
    jobs,
    files,
    byPrompt: (prompt) => [...jobs.values()].find((j) => j.input.prompt === prompt),
    stop: () => server.stop(true),
  };
}

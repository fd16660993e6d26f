import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { api, createAccount, uniqueEmail } from '../helpers/api.ts';
import {
  FAKE_INPUT_TOKENS,
  LATE_HEADERS_MS,
  TEXT_DELTAS,
  scenarioModel,
  startFakeLlmUpstream,
  type FakeLlmUpstream,
} from '../helpers/fake-llm-upstream.ts';
import { MODES, startGateway, type GatewayProcess } from '../helpers/gateway-process.ts';
import { OtlpReceiver, SPAN_KIND } from '../helpers/otlp-receiver.ts';
import { serverTimingOf } from '../helpers/server-timing.ts';
import { parsePrometheusText, sampleSum, type Sample } from '../helpers/prometheus-text.ts';
import { WebhookReceiver } from '../helpers/webhook-receiver.ts';

/**
 * Metrics, traces and request ids (docs/observability.md), against a gateway process: counters
 * read with a Prometheus text parser move by exactly the traffic the test made; an OTLP receiver
 * gets the spans (JSON and protobuf) with the client's trace id; the upstream sees the same ids.
 */

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';
const OUTPUT_TOKENS = TEXT_DELTAS.length;
/** $1 in / $2 out per million tokens, as configured below. */
const cost = (input: number, output: number) => (input * 1 + output * 2) / 1_000_000;
const hex = (bytes: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString('hex');

let oai: FakeLlmUpstream;
let ant: FakeLlmUpstream;
let otlp: OtlpReceiver;
let rx: WebhookReceiver;
let configPath: string;

beforeAll(async () => {
  oai = await startFakeLlmUpstream('openai', { apiKey: 'sk-fake-oai-obs' });
  ant = await startFakeLlmUpstream('anthropic', { apiKey: 'sk-ant-fake-obs' });
  otlp = new OtlpReceiver().start();
  rx = WebhookReceiver.start();
  const config = {
    providers: [
      { id: 'sandbox', kind: 'sandbox', display_name: 'Sandbox' },
      { id: 'fakeoai', kind: 'openai', base_url: oai.baseUrl, api_key: oai.apiKey, max_retries: 1, timeout_ms: 3000 },
      {
        id: 'fakeant',
        kind: 'anthropic',
        base_url: ant.baseUrl,
        api_key: ant.apiKey,
        max_retries: 1,
        timeout_ms: 3000,
      },
    ],
    models: [
      { id: 'sandbox/image', category: 'image', display_name: 'Sandbox Image' },
      scenarioModel('fakeoai', 'text'),
      scenarioModel('fakeoai', 'flaky-429'),
      scenarioModel('fakeoai', 'always-500'),
      scenarioModel('fakeoai', 'slow-stream'),
      scenarioModel('fakeoai', 'late-headers'),
      scenarioModel('fakeant', 'text'),
    ],
  };
  configPath = join(await mkdtemp(join(tmpdir(), 'gw-observability-')), 'gateway.json');
  await writeFile(configPath, JSON.stringify(config, null, 2));
}, 30_000);

afterAll(async () => {
  await oai?.stop();
  await ant?.stop();
  otlp?.stop();
  rx?.stop();
});

async function scrape(gw: GatewayProcess): Promise<{ text: string; samples: Sample[] }> {
  const res = await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  expect(res.status).toBe(200);
  const text = await res.text();
  return { text, samples: parsePrometheusText(text) };
}

/** How much each selected series moved between two scrapes. */
const delta =
  (before: Sample[], after: Sample[]) =>
  (name: string, labels: Record<string, string> = {}): number =>
    sampleSum(after, name, labels) - sampleSum(before, name, labels);

const CONTRACT_METRICS = [
  'gateway_http_requests_total',
  'gateway_http_request_duration_seconds',
  'gateway_llm_requests_total',
  'gateway_llm_tokens_total',
  'gateway_llm_time_to_first_token_seconds',
  'gateway_llm_overhead_seconds',
  'gateway_upstream_request_duration_seconds',
  'gateway_cost_usd_total',
  'gateway_tasks_total',
  'gateway_task_queue_depth',
  'gateway_llm_unsettled_calls',
  'gateway_settlement_journal_up',
  'gateway_settlement_journal_file_bytes',
  'gateway_webhook_deliveries_total',
  'gateway_fallbacks_total',
  'process_resident_memory_bytes',
];

for (const mode of MODES) {
  describe(`metrics, traces and request ids [${mode.name}]`, () => {
    let gw: GatewayProcess;
    let key: string;
    let accountId: number;
    const serviceName = `gw-obs-${mode.name}`;

    beforeAll(async () => {
      gw = await startGateway({
        ...(await mode.env('observability')),
        GATEWAY_CONFIG: configPath,
        METRICS_TOKEN,
        ALLOW_PRIVATE_URLS: 'true',
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_SERVICE_NAME: serviceName,
        OTEL_BSP_SCHEDULE_DELAY: '50',
      });
      ({ key, userId: accountId } = await createAccount(gw, uniqueEmail('obs'), 50));
    }, 90_000);
    afterAll(async () => {
      await gw?.stop();
    }, 30_000);

    test('GET /metrics needs METRICS_TOKEN and names every metric of the contract', async () => {
      expect((await fetch(`${gw.url}/metrics`)).status).toBe(401);
      const wrong = await fetch(`${gw.url}/metrics`, { headers: { authorization: 'Bearer not-the-token-at-all' } });
      expect(wrong.status).toBe(401);
      expect((await wrong.json()).code).toBe(401);
      const res = await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/plain');
      const text = await res.text();
      const declared = [...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]);
      for (const name of CONTRACT_METRICS) expect(declared).toContain(name);
      // Buckets for a sub-millisecond gateway and for minutes-long LLM calls.
      const buckets = parsePrometheusText(text)
        .filter((s) => s.name === 'gateway_http_request_duration_seconds_bucket')
        .map((s) => (s.labels.le === '+Inf' ? Number.POSITIVE_INFINITY : Number(s.labels.le)));
      expect(Math.min(...buckets)).toBeLessThanOrEqual(0.0001);
      expect(Math.max(...buckets.filter(Number.isFinite))).toBeGreaterThanOrEqual(300);
    });

    test('/readyz shows its details (providers, deployments, error text) only with METRICS_TOKEN', async () => {
      const probe = await api(gw, 'GET', '/readyz');
      expect(probe.status).toBe(200);
      // Error text of a database, a store or an upstream is not for whoever can reach the port.
      expect(probe.body).toEqual({ status: 'ready', checks: { database: { ok: true }, store: { ok: true } } });
      const wrong = await api(gw, 'GET', '/readyz', { key: 'not-the-token-at-all' });
      expect(Object.keys(wrong.body)).toEqual(['status', 'checks']);
      const full = await api(gw, 'GET', '/readyz', { key: METRICS_TOKEN });
      expect(full.status).toBe(200);
      expect(full.body).toMatchObject({
        status: 'ready',
        providers: expect.any(Object),
        deployments: expect.any(Object),
      });
      expect(full.body.checks.database).toMatchObject({
        ok: true,
        kind: mode.name === 'embedded' ? 'pglite' : 'postgres',
      });
    });

    test('counters move by exactly the traffic made; labels carry templates, never ids', async () => {
      const openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
      const anthropic = new Anthropic({ baseURL: gw.url, apiKey: key, maxRetries: 0 });
      const before = (await scrape(gw)).samples;
      const message = (marker: string) => [{ role: 'user' as const, content: `hello ${marker}` }];
      await Promise.all(
        [1, 2, 3].map((i) => openai.chat.completions.create({ model: 'fakeoai/text', messages: message(`c${i}`) })),
      );
      for (const i of [1, 2]) {
        const stream = anthropic.messages.stream({
          model: 'fakeant/text',
          max_tokens: 100,
          messages: message(`m${i}`),
        });
        await stream.finalMessage();
      }
      const failed = await openai.chat.completions.create({ model: 'fakeoai/always-500', messages: message('f') }).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(failed).toBeInstanceOf(OpenAI.APIError);
      const missingTask = crypto.randomUUID();
      for (let i = 0; i < 2; i++) expect((await api(gw, 'GET', `/v1/tasks/${missingTask}`, { key })).status).toBe(404);
      const { text, samples: after } = await scrape(gw);
      const d = delta(before, after);

      expect(d('gateway_http_requests_total', { method: 'POST', route: '/v1/chat/completions', status: '200' })).toBe(
        3,
      );
      expect(d('gateway_http_requests_total', { method: 'POST', route: '/v1/chat/completions' })).toBe(4);
      expect(d('gateway_http_requests_total', { method: 'POST', route: '/v1/messages', status: '200' })).toBe(2);
      expect(d('gateway_http_requests_total', { method: 'GET', route: '/v1/tasks/:task_id', status: '404' })).toBe(2);
      expect(d('gateway_http_request_duration_seconds_count', { route: '/v1/chat/completions' })).toBe(4);

      const oaiText = { model: 'fakeoai/text', provider: 'fakeoai' };
      const antText = { model: 'fakeant/text', provider: 'fakeant' };
      expect(
        d('gateway_llm_requests_total', { ...oaiText, client_format: 'chat-completions', outcome: 'completed' }),
      ).toBe(3);
      expect(
        d('gateway_llm_requests_total', { ...antText, client_format: 'anthropic-messages', outcome: 'completed' }),
      ).toBe(2);
      expect(d('gateway_llm_requests_total', { model: 'fakeoai/always-500', outcome: 'failed' })).toBe(1);
      expect(d('gateway_llm_tokens_total', { ...oaiText, type: 'input' })).toBe(3 * FAKE_INPUT_TOKENS);
      expect(d('gateway_llm_tokens_total', { ...oaiText, type: 'output' })).toBe(3 * OUTPUT_TOKENS);
      expect(d('gateway_llm_tokens_total', { ...antText, type: 'input' })).toBe(2 * FAKE_INPUT_TOKENS);
      expect(d('gateway_llm_tokens_total', { ...antText, type: 'output' })).toBe(2 * OUTPUT_TOKENS);
      expect(d('gateway_cost_usd_total', { model: 'fakeoai/text', category: 'llm' })).toBeCloseTo(
        3 * cost(FAKE_INPUT_TOKENS, OUTPUT_TOKENS),
        10,
      );
      // First token: streamed calls only.
      expect(d('gateway_llm_time_to_first_token_seconds_count', antText)).toBe(2);
      expect(d('gateway_llm_time_to_first_token_seconds_count', oaiText)).toBe(0);
      const ttftBuckets = after
        .filter((s) => s.name === 'gateway_llm_time_to_first_token_seconds_bucket' && s.labels.model === 'fakeant/text')
        .map((s) => s.labels.le);
      expect(ttftBuckets).toContain('0.001');
      expect(ttftBuckets).toContain('600');
      // One observation per upstream attempt: 3 + the failing model's 2 (max_retries 1); 2 for Anthropic.
      expect(d('gateway_upstream_request_duration_seconds_count', { provider: 'fakeoai' })).toBe(5);
      expect(d('gateway_upstream_request_duration_seconds_count', { provider: 'fakeant' })).toBe(2);
      expect(d('gateway_llm_overhead_seconds_count', { client_format: 'chat-completions', stream: 'false' })).toBe(3);
      expect(d('gateway_llm_overhead_seconds_count', { client_format: 'anthropic-messages', stream: 'true' })).toBe(2);

      // No raw path, key, account or task id in any label.
      const labelValues = after.flatMap((s) => Object.values(s.labels));
      expect(text).not.toContain(missingTask);
      expect(text).not.toContain(key);
      expect(labelValues).not.toContain(String(accountId));
      for (const route of after.filter((s) => s.labels.route).map((s) => s.labels.route as string))
        expect(route === 'unmatched' || /^\/[\w/:.-]*$/.test(route)).toBe(true);
    }, 60_000);

    test('x-request-id: the client’s own when valid, else a fresh one; in the log, upstream and on the task', async () => {
      const own = `obs-${hex(6)}`;
      const res = await api(gw, 'POST', '/v1/chat/completions', {
        key,
        headers: { 'x-request-id': own },
        body: { model: 'fakeoai/text', messages: [{ role: 'user', content: `rid ${own}` }] },
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-request-id')).toBe(own);
      const [upstream] = await oai.waitFor(own, 1);
      expect(upstream?.headers['x-request-id']).toBe(own);
      const tasks = await api(gw, 'GET', '/v1/tasks?category=llm&page_size=100', { key });
      expect(tasks.body.data.some((t: { request_id?: string }) => t.request_id === own)).toBe(true);

      for (const bad of ['a'.repeat(129), 'has space', '']) {
        const r = await api(gw, 'GET', '/v1/models', { key, headers: { 'x-request-id': bad } });
        expect(r.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{32}$/);
      }
      // Errors too, even before authentication or routing.
      expect((await api(gw, 'GET', '/no-such-route')).headers.get('x-request-id')).toMatch(/^req_/);
      const unauth = await api(gw, 'GET', '/v1/models', { headers: { 'x-request-id': `${own}-401` } });
      expect(unauth.status).toBe(401);
      expect(unauth.headers.get('x-request-id')).toBe(`${own}-401`);
      await Bun.sleep(50);
      expect(gw.output()).toContain(`"request_id":"${own}"`);
    }, 30_000);

    test('Server-Timing: the gateway, upstream and settlement parts of each answer, in every format, never a cached copy', async () => {
      const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
      const messages = [{ role: 'user' as const, content: `timing ${hex(4)}` }];
      const started = performance.now();
      const json = await client.chat.completions
        .create({ model: 'fakeoai/late-headers', messages }, { headers: { 'x-gateway-cache': 'ttl=60' } })
        .withResponse();
      const elapsed = performance.now() - started;
      expect(json.data.choices[0]?.message.content).toBeTruthy();
      const parts = serverTimingOf(json.response.headers);
      expect(Object.keys(parts)).toEqual(['gateway', 'upstream', 'settle']);
      // The upstream's own delay is the upstream's; the three parts add up to no more than the client saw.
      expect(parts.upstream).toBeGreaterThanOrEqual(LATE_HEADERS_MS);
      expect((parts.gateway ?? 0) + (parts.upstream ?? 0) + (parts.settle ?? 0)).toBeLessThanOrEqual(elapsed + 1);

      // The same request again is a cache hit: it carries no timing, least of all the first call's.
      const hit = await client.chat.completions
        .create({ model: 'fakeoai/late-headers', messages }, { headers: { 'x-gateway-cache': 'ttl=60' } })
        .withResponse();
      expect(hit.response.headers.get('x-gateway-cache')).toBe('hit');
      expect(hit.response.headers.get('server-timing')).toBeNull();

      // A stream's headers go out before its end: no settlement part; the first event waited on is the upstream's.
      const stream = await client.chat.completions
        .create({ model: 'fakeoai/late-headers', messages, stream: true })
        .withResponse();
      const streamed = serverTimingOf(stream.response.headers);
      expect(Object.keys(streamed)).toEqual(['gateway', 'upstream']);
      expect(streamed.upstream).toBeGreaterThanOrEqual(LATE_HEADERS_MS);
      let text = '';
      for await (const chunk of stream.data) text += chunk.choices[0]?.delta.content ?? '';
      expect(text.length).toBeGreaterThan(0);

      // The Messages format and the Responses API answer through the same service: the same parts.
      const anthropic = new Anthropic({ baseURL: gw.url, apiKey: key, maxRetries: 0 });
      const message = await anthropic.messages
        .create({ model: 'fakeant/text', max_tokens: 64, messages: [{ role: 'user', content: `timing ${hex(4)}` }] })
        .withResponse();
      expect(Object.keys(serverTimingOf(message.response.headers))).toEqual(['gateway', 'upstream', 'settle']);
      const responses = await client.responses
        .create({ model: 'fakeoai/text', input: `timing ${hex(4)}` })
        .withResponse();
      expect(Object.keys(serverTimingOf(responses.response.headers))).toEqual(['gateway', 'upstream', 'settle']);

      // A refused call has no upstream part to report: no header.
      const refused = await api(gw, 'POST', '/v1/chat/completions', {
        key,
        body: { model: 'fakeoai/no-such-model', messages },
      });
      expect(refused.status).toBe(404);
      expect(refused.headers.get('server-timing')).toBeNull();
    }, 30_000);

    test('traces: the client’s traceparent continued; one client span per upstream attempt, passed on upstream', async () => {
      const traceId = hex(16);
      const parentId = hex(8);
      const marker = `trace-${hex(4)}`;
      const res = await api(gw, 'POST', '/v1/chat/completions', {
        key,
        headers: { traceparent: `00-${traceId}-${parentId}-01`, 'x-request-id': marker },
        body: { model: 'fakeoai/flaky-429', messages: [{ role: 'user', content: marker }] },
      });
      expect(res.status).toBe(200);
      const attempts = await oai.waitFor(marker, 2);
      const sent = attempts.map((a) => /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(a.headers.traceparent ?? ''));
      expect(sent.map((m) => m?.[1])).toEqual([traceId, traceId]);

      const server = await otlp.waitFor(
        (s) => s.traceId === traceId && s.kind === SPAN_KIND.server,
        15_000,
        'server span',
      );
      expect(server.parentSpanId).toBe(parentId);
      expect(server.name).toBe('POST /v1/chat/completions');
      expect(server.serviceName).toBe(serviceName);
      expect(server.attributes['http.route']).toBe('/v1/chat/completions');
      expect(server.attributes['http.response.status_code']).toBe(200);
      expect(server.attributes['gateway.request_id']).toBe(marker);

      await otlp.waitFor(
        (s) =>
          s.traceId === traceId &&
          s.kind === SPAN_KIND.client &&
          s.attributes['gen_ai.usage.output_tokens'] !== undefined,
        15_000,
        'answering client span',
      );
      const clients = otlp.spans.filter((s) => s.traceId === traceId && s.kind === SPAN_KIND.client);
      expect(clients.length).toBe(2);
      for (const span of clients) {
        expect(span.name).toBe('chat fakeoai/flaky-429');
        expect(span.parentSpanId).toBe(server.spanId);
        expect(span.attributes['gen_ai.operation.name']).toBe('chat');
        expect(span.attributes['gen_ai.provider.name']).toBe('openai');
        expect(span.attributes['gen_ai.request.model']).toBe('up-flaky-429');
      }
      // Each attempt told the upstream its own span.
      expect(new Set(sent.map((m) => m?.[2]))).toEqual(new Set(clients.map((s) => s.spanId)));
      const [refused, answered] = [
        clients.find((s) => s.attributes['http.response.status_code'] === 429),
        clients.find((s) => s.attributes['http.response.status_code'] === 200),
      ];
      expect(refused?.statusCode).toBe(2);
      expect(answered?.attributes['gen_ai.usage.input_tokens']).toBe(FAKE_INPUT_TOKENS);
      expect(answered?.attributes['gen_ai.usage.output_tokens']).toBe(OUTPUT_TOKENS);
      expect(answered?.attributes['gen_ai.response.finish_reasons']).toEqual(['stop']);
      expect(typeof answered?.attributes['gen_ai.response.model']).toBe('string');
    }, 30_000);

    test('a client that leaves mid-stream is counted cancelled; a broken traceparent starts a new trace', async () => {
      const before = (await scrape(gw)).samples;
      const marker = `cancel-${hex(4)}`;
      const abort = new AbortController();
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', traceparent: 'x'.repeat(5000) },
        body: JSON.stringify({
          model: 'fakeoai/slow-stream',
          stream: true,
          messages: [{ role: 'user', content: marker }],
        }),
        signal: abort.signal,
      });
      expect(res.status).toBe(200);
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      await reader.read();
      abort.abort();
      await reader.cancel().catch(() => undefined);
      let after: Sample[] = [];
      const cancelled = { model: 'fakeoai/slow-stream', outcome: 'cancelled' };
      for (const deadline = Date.now() + 10_000; Date.now() < deadline; await Bun.sleep(50)) {
        after = (await scrape(gw)).samples;
        if (delta(before, after)('gateway_llm_requests_total', cancelled) >= 1) break;
      }
      expect(delta(before, after)('gateway_llm_requests_total', cancelled)).toBe(1);
      expect(
        delta(before, after)('gateway_llm_time_to_first_token_seconds_count', { model: 'fakeoai/slow-stream' }),
      ).toBe(1);
      const [upstream] = await oai.waitFor(marker, 1);
      const sent = /^00-([0-9a-f]{32})-/.exec(upstream?.headers.traceparent ?? '')?.[1];
      expect(sent).toBeDefined();
      const server = await otlp.waitFor(
        (s) => s.traceId === sent && s.kind === SPAN_KIND.server,
        15_000,
        'server span',
      );
      expect(server.parentSpanId).toBe('');
    }, 30_000);

    test('a media task and its webhook: counted, costed, traced, and its record carries the request id', async () => {
      const rid = `task-${hex(6)}`;
      const before = (await scrape(gw)).samples;
      const created = await api(gw, 'POST', '/v1/tasks', {
        key,
        headers: { 'x-request-id': rid },
        body: { model: 'sandbox/image', input: { prompt: 'a red fox' }, callback_url: rx.url(`/obs-${rid}`) },
      });
      expect(created.status).toBe(200);
      const taskId = created.body.data.task_id as string;
      await rx.waitForCount({ taskId }, 1, 30_000);
      const task = (await api(gw, 'GET', `/v1/tasks/${taskId}`, { key })).body.data;
      expect(task.status).toBe('completed');
      expect(task.request_id).toBe(rid);
      // The delivery's result is written in a small batch after the send.
      let after: Sample[] = [];
      for (const deadline = Date.now() + 10_000; Date.now() < deadline; await Bun.sleep(50)) {
        after = (await scrape(gw)).samples;
        if (delta(before, after)('gateway_webhook_deliveries_total') >= 1) break;
      }
      const d = delta(before, after);
      expect(d('gateway_tasks_total', { model: 'sandbox/image', status: 'completed' })).toBe(1);
      expect(d('gateway_webhook_deliveries_total', { outcome: 'delivered' })).toBe(1);
      expect(d('gateway_cost_usd_total', { model: 'sandbox/image', category: 'image' })).toBeCloseTo(task.cost, 10);
      expect(sampleSum(after, 'gateway_task_queue_depth')).toBe(0);

      const run = await otlp.waitFor(
        (s) => s.name === 'task sandbox/image' && s.attributes['gateway.task.id'] === taskId,
        15_000,
        'task span',
      );
      expect(run.attributes['gateway.request_id']).toBe(rid);
      await otlp.waitFor(
        (s) => s.name === 'webhook delivery' && s.attributes['gateway.task.id'] === taskId,
        15_000,
        'webhook span',
      );
    }, 60_000);
  });
}

describe('traces over OTLP/protobuf by default; tracing off sends no traceparent', () => {
  let traced: GatewayProcess;
  let plain: GatewayProcess;
  const pb = new OtlpReceiver();

  beforeAll(async () => {
    pb.start();
    const mode = MODES[0] as (typeof MODES)[number];
    [traced, plain] = await Promise.all([
      startGateway({
        ...(await mode.env('observability-pb')),
        GATEWAY_CONFIG: configPath,
        OTEL_EXPORTER_OTLP_ENDPOINT: pb.endpoint,
        OTEL_BSP_SCHEDULE_DELAY: '50',
      }),
      startGateway({ ...(await mode.env('observability-off')), GATEWAY_CONFIG: configPath }),
    ]);
  }, 90_000);
  afterAll(async () => {
    await Promise.all([traced?.stop(), plain?.stop()]);
    pb.stop();
  }, 30_000);

  test('the protobuf export decodes to the same spans and attributes', async () => {
    const { key } = await createAccount(traced, uniqueEmail('obs-pb'), 5);
    const traceId = hex(16);
    const marker = `pb-${hex(4)}`;
    const res = await api(traced, 'POST', '/v1/chat/completions', {
      key,
      headers: { traceparent: `00-${traceId}-${hex(8)}-01` },
      body: { model: 'fakeoai/text', messages: [{ role: 'user', content: marker }] },
    });
    expect(res.status).toBe(200);
    const span = await otlp_wait(pb, traceId);
    expect(span.encoding).toBe('protobuf');
    expect(span.name).toBe('chat fakeoai/text');
    expect(span.serviceName).toBe('generation-gateway');
    expect(span.attributes['gen_ai.usage.input_tokens']).toBe(FAKE_INPUT_TOKENS);
    expect(span.attributes['gen_ai.response.finish_reasons']).toEqual(['stop']);
    expect(pb.contentTypes.every((t) => t.startsWith('application/x-protobuf'))).toBe(true);
  }, 30_000);

  test('without an OTLP endpoint: the request id goes upstream, no traceparent does', async () => {
    const { key } = await createAccount(plain, uniqueEmail('obs-off'), 5);
    const marker = `off-${hex(4)}`;
    const res = await api(plain, 'POST', '/v1/chat/completions', {
      key,
      headers: { traceparent: `00-${hex(16)}-${hex(8)}-01`, 'x-request-id': marker },
      body: { model: 'fakeoai/text', messages: [{ role: 'user', content: marker }] },
    });
    expect(res.status).toBe(200);
    const [upstream] = await oai.waitFor(marker, 1);
    expect(upstream?.headers['x-request-id']).toBe(marker);
    expect(upstream?.headers.traceparent).toBeUndefined();
    expect(plain.output()).not.toContain('tracing on');
  }, 30_000);
});

function otlp_wait(receiver: OtlpReceiver, traceId: string) {
  return receiver.waitFor(
    (s) =>
      s.traceId === traceId && s.kind === SPAN_KIND.client && s.attributes['gen_ai.usage.input_tokens'] !== undefined,
    15_000,
    'protobuf client span',
  );
}

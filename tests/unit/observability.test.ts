import { describe, expect, test } from 'bun:test';
import { resolve } from 'node:path';
import fc from 'fast-check';
import { ConfigError } from '../../src/config/config-error.ts';
import { upstreamRequest } from '../../providers/common/upstream-request.ts';
import { beginRequest, inRequestScope } from '../../src/observability/http-observer.ts';
import { registry } from '../../src/observability/metrics.ts';
import { requestIdFor } from '../../src/observability/request-id.ts';
import { tracingConfig } from '../../src/observability/tracing-config.ts';

describe('x-request-id', () => {
  test('the client’s own id is kept when it is 1–128 printable ASCII characters', () => {
    expect(requestIdFor('abc-123')).toBe('abc-123');
    expect(requestIdFor('x'.repeat(128))).toBe('x'.repeat(128));
    expect(requestIdFor('00-4bf92f3577b34da6a3ce929d0e0e4736~!@#$%^&*()')).toBe(
      '00-4bf92f3577b34da6a3ce929d0e0e4736~!@#$%^&*()',
    );
  });

  test('anything else gets a fresh id', () => {
    for (const bad of [null, '', 'x'.repeat(129), 'has space', 'tab\there', 'é', '\u0000', '\ud800', 'line\nbreak']) {
      const id = requestIdFor(bad);
      expect(id).toMatch(/^req_[0-9a-f]{32}$/);
    }
    expect(requestIdFor(null)).not.toBe(requestIdFor(null));
  });

  test('whatever the header holds, the id is printable ASCII of at most 128 characters', () => {
    fc.assert(
      fc.property(fc.option(fc.string({ unit: 'binary', maxLength: 300 }), { nil: null }), (header) => {
        const id = requestIdFor(header);
        expect(id.length).toBeGreaterThan(0);
        expect(id.length).toBeLessThanOrEqual(128);
        expect(id).toMatch(/^[\x21-\x7e]+$/);
      }),
    );
  });
});

describe('tracing configuration from the OTEL_* variables', () => {
  test('off without an endpoint, or when disabled', () => {
    expect(tracingConfig({})).toBeUndefined();
    expect(tracingConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).toBeUndefined();
    expect(
      tracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' }),
    ).toBeUndefined();
    expect(
      tracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_TRACES_EXPORTER: 'none' }),
    ).toBeUndefined();
  });

  test('http/protobuf by default, http/json honoured, the traces-specific variables win', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' };
    expect(tracingConfig(endpoint)).toEqual({ protocol: 'http/protobuf', serviceName: 'generation-gateway' });
    expect(tracingConfig({ ...endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'gw' })).toEqual({
      protocol: 'http/json',
      serviceName: 'gw',
    });
    expect(
      tracingConfig({
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      })?.protocol,
    ).toBe('http/json');
  });

  test('what it cannot do stops the start, naming the variable', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' };
    expect(() => tracingConfig({ ...endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(ConfigError);
    expect(() => tracingConfig({ ...endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(
      /OTEL_EXPORTER_OTLP_PROTOCOL/,
    );
    expect(() => tracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT/);
  });
});

test('tracing off: the request path loads no OpenTelemetry SDK and makes no span', async () => {
  const script = resolve(import.meta.dir, '../fixtures/observability/loaded-modules.ts');
  const proc = Bun.spawn([process.execPath, 'run', script], { stdout: 'pipe', stderr: 'pipe', env: { PATH: '' } });
  const [out, err, code] = [
    await new Response(proc.stdout).text(),
    await new Response(proc.stderr).text(),
    await proc.exited,
  ];
  expect(err).toBe('');
  expect(code).toBe(0);
  const { packages, span } = JSON.parse(out) as { packages: string[]; span: boolean };
  expect(span).toBe(false);
  // prom-client loads the API package for its CPU metric; no SDK, exporter or resource package.
  expect(packages.filter((p) => p !== 'api')).toEqual([]);
});

describe('metric definitions', () => {
  const metrics = registry.getMetricsAsArray() as unknown as Array<{ name: string; labelNames?: string[] }>;

  test('no label can carry an account, a key or a task id', () => {
    const labels = metrics.flatMap((m) => (m.name.startsWith('gateway_') ? (m.labelNames ?? []) : []));
    expect(labels.length).toBeGreaterThan(10);
    for (const label of labels) expect(label).not.toMatch(/account|key|task_id|user|email|request_id|path/);
  });

  test('the example Grafana dashboard queries only metrics the gateway exports', async () => {
    const dashboard = await Bun.file(resolve(import.meta.dir, '../../docs/grafana-dashboard.json')).text();
    const used = new Set(
      [...dashboard.matchAll(/\b((?:gateway|process)_[a-z_]+)/g)].map((m) =>
        (m[1] as string).replace(/_(bucket|sum|count)$/, ''),
      ),
    );
    expect(used.size).toBeGreaterThan(10);
    const exported = new Set(metrics.map((m) => m.name));
    expect([...used].filter((name) => !exported.has(name))).toEqual([]);
  });
});

test('an upstream call made while answering a request carries its x-request-id; one made outside none', async () => {
  const seen: Array<string | null> = [];
  const upstream = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: (req) => {
      seen.push(req.headers.get('x-request-id'));
      return Response.json({});
    },
  });
  try {
    const call = () =>
      upstreamRequest({
        method: 'GET',
        url: `http://127.0.0.1:${upstream.port}/voices`,
        headers: {},
        policy: { maxRetries: 0, timeoutMs: 2000 },
        signal: new AbortController().signal,
      });
    const request = new Request('http://127.0.0.1/v1/resources/x/voices', { headers: { 'x-request-id': 'rid-42' } });
    await inRequestScope(beginRequest(request), async () => {
      await Bun.sleep(1); // still in scope after an await
      await call();
    });
    await call();
    expect(seen).toEqual(['rid-42', null]);
  } finally {
    upstream.stop(true);
  }
});

import type { Attributes, Span, SpanKind, TimeInput } from '@opentelemetry/api';
import type { TracingConfig } from './tracing-config.ts';

export type { Span };

/** What the gateway's hooks need from OpenTelemetry, loaded only when tracing is on. */
export interface Tracing {
  /** A server span continuing the client's `traceparent` when it sent a valid one. */
  serverSpan(name: string, headers: Headers, attributes: Attributes): Span;
  /** A span under `parent` (a root span when there is none). */
  childSpan(
    name: string,
    kind: 'client' | 'internal',
    parent: Span | undefined,
    attributes: Attributes,
    start?: TimeInput,
  ): Span;
  /** The `traceparent` (and `tracestate`) headers that make an upstream's work part of `span`'s trace. */
  propagation(span: Span): Record<string, string>;
  /** Marks the span failed with a short reason (its `error.type`). */
  fail(span: Span, errorType: string): void;
  /** Exports what is buffered now. */
  flush(): Promise<void>;
  /** Exports what is buffered and stops (shutdown). */
  shutdown(): Promise<void>;
}

let active: Tracing | undefined;

/** The tracing in use, or undefined when it is off: hooks then create no spans at all. */
export function tracing(): Tracing | undefined {
  return active;
}

/**
 * Starts the OpenTelemetry SDK (BasicTracerProvider, batch processor, OTLP/HTTP exporter in
 * protobuf or JSON). Imported dynamically, so a gateway without an OTLP endpoint never loads it.
 * The exporter reads `OTEL_EXPORTER_OTLP_*` (endpoint, headers, timeout) and the batch processor
 * `OTEL_BSP_*` themselves.
 * @see https://opentelemetry.io/docs/languages/js/exporters/
 */
export async function startTracing(config: TracingConfig): Promise<Tracing> {
  const [api, core, resources, sdk, exporterModule] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/core'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace-base'),
    config.protocol === 'http/json'
      ? import('@opentelemetry/exporter-trace-otlp-http')
      : import('@opentelemetry/exporter-trace-otlp-proto'),
  ]);
  const resource = resources
    .resourceFromAttributes({ 'service.name': config.serviceName })
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const provider = new sdk.BasicTracerProvider({
    resource,
    spanProcessors: [new sdk.BatchSpanProcessor(new exporterModule.OTLPTraceExporter())],
  });
  const tracer = provider.getTracer('generation-gateway');
  const propagator = new core.W3CTraceContextPropagator();
  const kinds: Record<'client' | 'internal', SpanKind> = {
    client: api.SpanKind.CLIENT,
    internal: api.SpanKind.INTERNAL,
  };
  const headerGetter = {
    keys: (carrier: Headers) => [...carrier.keys()],
    get: (carrier: Headers, key: string) => carrier.get(key) ?? undefined,
  };
  active = {
    serverSpan(name, headers, attributes) {
      const parent = propagator.extract(api.ROOT_CONTEXT, headers, headerGetter);
      return tracer.startSpan(name, { kind: api.SpanKind.SERVER, attributes }, parent);
    },
    childSpan(name, kind, parent, attributes, start) {
      const context = parent ? api.trace.setSpan(api.ROOT_CONTEXT, parent) : api.ROOT_CONTEXT;
      return tracer.startSpan(name, { kind: kinds[kind], attributes, startTime: start }, context);
    },
    propagation(span) {
      const carrier: Record<string, string> = {};
      propagator.inject(api.trace.setSpan(api.ROOT_CONTEXT, span), carrier, api.defaultTextMapSetter);
      return carrier;
    },
    fail(span, errorType) {
      span.setAttribute('error.type', errorType);
      span.setStatus({ code: api.SpanStatusCode.ERROR, message: errorType });
    },
    flush() {
      return provider.forceFlush();
    },
    async shutdown() {
      active = undefined;
      await provider.shutdown();
    },
  };
  return active;
}

/** Ends an upstream attempt's client span with what the attempt came to: a status, or a network error. */
export function endAttemptSpan(t: Tracing, span: Span, result: { status: number } | { error: string }): void {
  if ('error' in result) t.fail(span, result.error);
  else {
    span.setAttribute('http.response.status_code', result.status);
    if (result.status >= 400) t.fail(span, String(result.status));
  }
  span.end();
}

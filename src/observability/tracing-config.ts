import * as v from 'valibot';
import { ConfigError } from '../config/config-error.ts';
import { formatIssues } from '../http/validation.ts';

export type OtlpProtocol = 'http/protobuf' | 'http/json';

export interface TracingConfig {
  protocol: OtlpProtocol;
  serviceName: string;
}

const OtelEnv = v.object({
  OTEL_EXPORTER_OTLP_ENDPOINT: v.optional(v.pipe(v.string(), v.url('expected an absolute URL'))),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: v.optional(v.pipe(v.string(), v.url('expected an absolute URL'))),
  OTEL_EXPORTER_OTLP_PROTOCOL: v.optional(
    v.picklist(['http/protobuf', 'http/json'], 'expected http/protobuf or http/json (grpc is not supported)'),
  ),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: v.optional(
    v.picklist(['http/protobuf', 'http/json'], 'expected http/protobuf or http/json (grpc is not supported)'),
  ),
  OTEL_SERVICE_NAME: v.optional(v.pipe(v.string(), v.minLength(1))),
  OTEL_SDK_DISABLED: v.optional(v.string()),
  OTEL_TRACES_EXPORTER: v.optional(v.string()),
});

/**
 * Tracing is on only when an OTLP endpoint is set (the standard `OTEL_*` variables); otherwise
 * undefined, and the SDK is never loaded. The exporter itself reads the endpoint, headers and
 * timeout variables; this only decides on/off and the protocol, and refuses what it cannot do.
 * @see https://opentelemetry.io/docs/specs/otel/protocol/exporter/
 */
export function tracingConfig(source: Record<string, string | undefined> = process.env): TracingConfig | undefined {
  const picked: Record<string, string> = {};
  for (const key of Object.keys(OtelEnv.entries)) {
    const value = source[key];
    if (value !== undefined && value !== '') picked[key] = value;
  }
  const result = v.safeParse(OtelEnv, picked);
  if (!result.success) throw new ConfigError(`invalid environment: ${formatIssues(result.issues)}`);
  const e = result.output;
  if (!e.OTEL_EXPORTER_OTLP_ENDPOINT && !e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return undefined;
  if (e.OTEL_SDK_DISABLED === 'true' || e.OTEL_TRACES_EXPORTER === 'none') return undefined;
  return {
    protocol: e.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? e.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf',
    serviceName: e.OTEL_SERVICE_NAME ?? 'generation-gateway',
  };
}

import type { Server } from 'bun';

/**
 * An OTLP/HTTP trace receiver for tests: `POST /v1/traces` in `http/json` or `http/protobuf`,
 * every span kept in one shape whatever the encoding (ids as lower-case hex, attributes as plain
 * values). The protobuf side is a small reader of the wire format for the fields tests look at —
 * no protobuf package is installed.
 * @see https://opentelemetry.io/docs/specs/otlp/#otlphttp
 * @see https://github.com/open-telemetry/opentelemetry-proto/blob/main/opentelemetry/proto/trace/v1/trace.proto
 */

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP's numbers: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, unknown>;
  /** 0 unset, 1 ok, 2 error. */
  statusCode: number;
  serviceName: string;
  /** How the batch came: `json` or `protobuf`. */
  encoding: 'json' | 'protobuf';
}

export const SPAN_KIND = { internal: 1, server: 2, client: 3 } as const;

// ---- OTLP/JSON ----

interface JsonAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
  arrayValue?: { values?: JsonAnyValue[] };
}
interface JsonKeyValue {
  key: string;
  value: JsonAnyValue;
}

function jsonValue(v: JsonAnyValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(jsonValue);
  return undefined;
}

const jsonAttributes = (list: JsonKeyValue[] = []) =>
  Object.fromEntries(list.map((kv) => [kv.key, jsonValue(kv.value)]));

function fromJson(body: string): ReceivedSpan[] {
  const doc = JSON.parse(body) as {
    resourceSpans?: Array<{
      resource?: { attributes?: JsonKeyValue[] };
      scopeSpans?: Array<{
        spans?: Array<{
          traceId: string;
          spanId: string;
          parentSpanId?: string;
          name: string;
          kind: number;
          attributes?: JsonKeyValue[];
          status?: { code?: number };
        }>;
      }>;
    }>;
  };
  return (doc.resourceSpans ?? []).flatMap((rs) => {
    const serviceName = String(jsonAttributes(rs.resource?.attributes)['service.name'] ?? '');
    return (rs.scopeSpans ?? []).flatMap((ss) =>
      (ss.spans ?? []).map((s) => ({
        traceId: s.traceId.toLowerCase(),
        spanId: s.spanId.toLowerCase(),
        parentSpanId: (s.parentSpanId ?? '').toLowerCase(),
        name: s.name,
        kind: s.kind,
        attributes: jsonAttributes(s.attributes),
        statusCode: s.status?.code ?? 0,
        serviceName,
        encoding: 'json' as const,
      })),
    );
  });
}

// ---- OTLP/protobuf ----

type Field = { no: number; wire: number; varint?: number; bytes?: Uint8Array; fixed64?: DataView };

/** The fields of one message, in order (repeated fields appear once per element). */
function fields(buf: Uint8Array): Field[] {
  const out: Field[] = [];
  let i = 0;
  const varint = () => {
    let result = 0;
    let scale = 1;
    for (;;) {
      const byte = buf[i++] as number;
      result += (byte & 0x7f) * scale;
      scale *= 128;
      if (byte < 0x80) return result;
    }
  };
  while (i < buf.length) {
    const tag = varint();
    const no = Math.floor(tag / 8);
    const wire = tag % 8;
    if (wire === 0) out.push({ no, wire, varint: varint() });
    else if (wire === 1) {
      out.push({ no, wire, fixed64: new DataView(buf.buffer, buf.byteOffset + i, 8) });
      i += 8;
    } else if (wire === 2) {
      const len = varint();
      out.push({ no, wire, bytes: buf.subarray(i, i + len) });
      i += len;
    } else if (wire === 5) i += 4;
    else throw new Error(`unsupported protobuf wire type ${wire}`);
  }
  return out;
}

const text = (b?: Uint8Array) => new TextDecoder().decode(b ?? new Uint8Array());
const hex = (b?: Uint8Array) => Buffer.from(b ?? new Uint8Array()).toString('hex');
const all = (fs: Field[], no: number) => fs.filter((f) => f.no === no);
const one = (fs: Field[], no: number) => fs.find((f) => f.no === no);

function protoValue(buf: Uint8Array): unknown {
  const f = fields(buf)[0];
  if (!f) return undefined;
  switch (f.no) {
    case 1:
      return text(f.bytes);
    case 2:
      return f.varint === 1;
    case 3:
      return f.varint;
    case 4:
      return f.fixed64?.getFloat64(0, true);
    case 5:
      return all(fields(f.bytes ?? new Uint8Array()), 1).map((v) => protoValue(v.bytes ?? new Uint8Array()));
    default:
      return undefined;
  }
}

function protoAttributes(fs: Field[], no: number): Record<string, unknown> {
  return Object.fromEntries(
    all(fs, no).map((kv) => {
      const parts = fields(kv.bytes ?? new Uint8Array());
      return [text(one(parts, 1)?.bytes), protoValue(one(parts, 2)?.bytes ?? new Uint8Array())];
    }),
  );
}

function fromProtobuf(body: Uint8Array): ReceivedSpan[] {
  return all(fields(body), 1).flatMap((rsField) => {
    const rs = fields(rsField.bytes ?? new Uint8Array());
    const resource = fields(one(rs, 1)?.bytes ?? new Uint8Array());
    const serviceName = String(protoAttributes(resource, 1)['service.name'] ?? '');
    return all(rs, 2).flatMap((ssField) =>
      all(fields(ssField.bytes ?? new Uint8Array()), 2).map((spanField) => {
        const s = fields(spanField.bytes ?? new Uint8Array());
        const status = fields(one(s, 15)?.bytes ?? new Uint8Array());
        return {
          traceId: hex(one(s, 1)?.bytes),
          spanId: hex(one(s, 2)?.bytes),
          parentSpanId: hex(one(s, 4)?.bytes),
          name: text(one(s, 5)?.bytes),
          kind: one(s, 6)?.varint ?? 0,
          attributes: protoAttributes(s, 9),
          statusCode: one(status, 3)?.varint ?? 0,
          serviceName,
          encoding: 'protobuf' as const,
        };
      }),
    );
  });
}

export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  /** Content types of the export requests received. */
  readonly contentTypes: string[] = [];
  private server?: Server<undefined>;

  start(): this {
    this.server = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: async (req) => {
        const url = new URL(req.url);
        if (req.method !== 'POST' || url.pathname !== '/v1/traces') return new Response('not found', { status: 404 });
        const type = req.headers.get('content-type') ?? '';
        this.contentTypes.push(type);
        if (type.startsWith('application/json')) {
          this.spans.push(...fromJson(await req.text()));
          return Response.json({});
        }
        this.spans.push(...fromProtobuf(new Uint8Array(await req.arrayBuffer())));
        return new Response(new Uint8Array(), { headers: { 'content-type': 'application/x-protobuf' } });
      },
    });
    return this;
  }

  get endpoint(): string {
    return `http://127.0.0.1:${this.server?.port}`;
  }

  /** Waits until a span satisfying `predicate` has arrived. */
  async waitFor(predicate: (s: ReceivedSpan) => boolean, timeoutMs = 15_000, what = 'span'): Promise<ReceivedSpan> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.spans.find(predicate);
      if (found) return found;
      if (Date.now() > deadline)
        throw new Error(`no ${what} within ${timeoutMs} ms; got: ${this.spans.map((s) => s.name).join(', ')}`);
      await Bun.sleep(25);
    }
  }

  stop(): void {
    this.server?.stop(true);
  }
}

import { parseServerTiming } from '../../tests/helpers/server-timing.ts';

/**
 * Time to the first streamed byte, sampled: one streamed POST every `intervalMs` on a pool of
 * keep-alive raw sockets (so no connect time is in the figure, and a stream whose end is slow —
 * the gateway ends a stream after its settlement — does not delay the next probe), each timed from
 * the moment its request is written to the moment the first byte of the first SSE event of the
 * body (`data:` or `event:` after the response head) arrives. Meant to run while h2load drives the
 * background load. A tick that finds every connection busy is skipped and counted. Bounded by
 * `samples` and `deadlineMs`; a non-200 answer ends the probe with an error. A JSON answer (one
 * with a `content-length`) is timed the same way, its "first event" being its head.
 */
export interface FirstByteSamples {
  /** ms to the response head (status line and headers). */
  headMs: number[];
  /** ms to the first byte of the first event. */
  firstEventMs: number[];
  /** Each answer's `Server-Timing` as name → ms (docs/observability.md), `{}` when it had none. */
  serverTiming: Array<Record<string, number>>;
  /** Ticks skipped because every connection was still busy with an earlier stream. */
  skipped: number;
}

/** `server-timing: a;dur=1.5, b;dur=2` in a response head → `{a: 1.5, b: 2}`; `{}` when it has none. */
function serverTimingIn(head: string): Record<string, number> {
  const value = /\r\nserver-timing: *([^\r]*)/i.exec(head)?.[1];
  return value === undefined ? {} : parseServerTiming(value);
}

interface ProbeOptions {
  host: string;
  port: number;
  path: string;
  headers: Record<string, string>;
  body: string;
  samples: number;
  intervalMs: number;
  deadlineMs: number;
  /** Keep-alive connections in the pool (default 8). */
  connections?: number;
}

/** One keep-alive connection carrying one streamed request at a time. */
interface ProbeConnection {
  busy: boolean;
  /** Sends the request; resolves with [head ms, first event ms, server timing] once the answer has ended. */
  send(): Promise<[number, number, Record<string, number>]>;
  end(): void;
}

async function openConnection(opts: ProbeOptions, request: Buffer): Promise<ProbeConnection> {
  let text = '';
  let t0 = 0;
  let headAt = 0;
  let eventAt = 0;
  let bodyFrom = -1;
  /** A JSON answer's length; -1 for a chunked stream. */
  let length = -1;
  let done: (error?: Error) => void = () => undefined;
  const socket = await Bun.connect({
    hostname: opts.host,
    port: opts.port,
    socket: {
      data(_s, chunk) {
        const now = performance.now();
        text += chunk.toString('latin1');
        if (bodyFrom < 0) {
          const end = text.indexOf('\r\n\r\n');
          if (end < 0) return;
          headAt = now;
          bodyFrom = end + 4;
          const status = /^HTTP\/1\.1 (\d{3})/.exec(text)?.[1];
          if (status !== '200') return done(new Error(`probe: status ${status}: ${text.slice(0, 400)}`));
          length = Number(/\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end))?.[1] ?? -1);
          if (length >= 0) eventAt = now;
        }
        if (length >= 0) {
          if (text.length - bodyFrom >= length) done();
          return;
        }
        if (!eventAt && /(^|\n)(data|event):/.test(text.slice(bodyFrom))) eventAt = now;
        // The chunked body's last chunk: the answer is complete and the connection free again.
        if (text.endsWith('\r\n0\r\n\r\n')) done();
      },
      close: () => done(new Error('probe: the connection closed')),
      error: (_s, err) => done(err),
    },
  });
  const conn: ProbeConnection = {
    busy: false,
    send: () =>
      new Promise<[number, number, Record<string, number>]>((resolve, reject) => {
        conn.busy = true;
        text = '';
        bodyFrom = -1;
        length = -1;
        headAt = 0;
        eventAt = 0;
        const timer = setTimeout(() => done(new Error('probe: no complete answer within 10 s')), 10_000);
        done = (error) => {
          done = () => undefined;
          clearTimeout(timer);
          conn.busy = false;
          if (error) return reject(error);
          if (!eventAt) return reject(new Error(`probe: a stream without an event: ${text.slice(0, 400)}`));
          resolve([headAt - t0, eventAt - t0, serverTimingIn(text.slice(0, bodyFrom))]);
        };
        t0 = performance.now();
        socket.write(request);
      }),
    end: () => socket.end(),
  };
  return conn;
}

export async function probeFirstByte(opts: ProbeOptions): Promise<FirstByteSamples> {
  const request = Buffer.from(
    `POST ${opts.path} HTTP/1.1\r\nHost: ${opts.host}:${opts.port}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(opts.body)}\r\n` +
      Object.entries(opts.headers)
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('') +
      `\r\n${opts.body}`,
  );
  const pool = await Promise.all(Array.from({ length: opts.connections ?? 8 }, () => openConnection(opts, request)));
  const out: FirstByteSamples = { headMs: [], firstEventMs: [], serverTiming: [], skipped: 0 };
  const inFlight = new Set<Promise<void>>();
  let failure: Error | undefined;
  const deadline = Date.now() + opts.deadlineMs;
  try {
    let next = performance.now();
    for (let i = 0; i < opts.samples && Date.now() < deadline && !failure; i++) {
      const wait = next - performance.now();
      if (wait > 0) await Bun.sleep(wait);
      next += opts.intervalMs;
      const conn = pool.find((c) => !c.busy);
      if (!conn) {
        out.skipped++;
        continue;
      }
      const p: Promise<void> = conn
        .send()
        .then(([head, event, timing]) => {
          out.headMs.push(head);
          out.firstEventMs.push(event);
          out.serverTiming.push(timing);
        })
        .catch((err: Error) => {
          failure ??= err;
        })
        .finally(() => inFlight.delete(p));
      inFlight.add(p);
    }
    await Promise.all(inFlight);
  } finally {
    for (const c of pool) c.end();
  }
  if (failure) throw failure;
  return out;
}

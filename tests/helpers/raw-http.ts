import { connect, type Socket } from 'node:net';

/**
 * One HTTP/1.1 request over a plain socket, for what fetch cannot do: send a body slowly or
 * stall it, declare a length and send something else, stop sending the moment the server
 * answers, pick the local address, and see whether the server closed the connection.
 */
export interface RawBody {
  /** Bytes to send in all (generated, `fill` repeated) unless `data` is given. */
  total?: number;
  data?: Uint8Array;
  fill?: number;
  /** Transfer-Encoding: chunked instead of Content-Length. */
  chunked?: boolean;
  /** Content-Length to declare (defaults to the real length; ignored when chunked). */
  declaredLength?: number;
  chunkSize?: number;
  /** Stop sending after this many bytes and wait (a stalled body). */
  stallAfter?: number;
  /** Pause between chunks (a slow body). */
  delayMs?: number;
}

export interface RawRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: RawBody;
  /** Local address to connect from (any of 127.0.0.0/8 works on Linux loopback). */
  localAddress?: string;
  /** Give up waiting for an answer after this long. */
  timeoutMs?: number;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  text: string;
  /** JSON body, when it parses. */
  json: any;
  /** The server closed the connection after answering (within `closeWaitMs`, when the answer said `connection: close`). */
  closed: boolean;
  /** Body bytes written to the socket before the answer came (or sending stopped). */
  sentBytes: number;
  /** From the first byte written to the complete answer. */
  elapsedMs: number;
}

const CRLF = '\r\n';

/** A connection: bytes out, events in. */
interface Transport {
  /** Resolves once `data` is handed to the kernel; false when the connection is gone. */
  write(data: Uint8Array): Promise<boolean>;
  destroy(): void;
}

interface TransportEvents {
  data(chunk: Uint8Array): void;
  close(): void;
}

/**
 * Bun's own sockets: an answer that arrives while we are still sending is delivered even when
 * the server then resets the connection (node:net drops it when a write fails first).
 */
async function bunTransport(port: number, on: TransportEvents): Promise<Transport> {
  let closed = false;
  let drained: () => void = () => undefined;
  const socket = await Bun.connect({
    hostname: '127.0.0.1',
    port,
    socket: {
      data: (_s, chunk) => on.data(chunk),
      drain: () => drained(),
      close: () => {
        closed = true;
        drained();
        on.close();
      },
      error: () => undefined,
    },
  });
  return {
    async write(data) {
      let rest = data;
      while (rest.byteLength > 0) {
        if (closed) return false;
        const n = socket.write(rest);
        if (n < 0) return false;
        rest = rest.subarray(n);
        if (rest.byteLength > 0) await new Promise<void>((resolve) => (drained = resolve));
      }
      return !closed;
    },
    destroy: () => socket.terminate(),
  };
}

/** node:net, for a chosen local address (small requests only: see bunTransport). */
async function nodeTransport(port: number, localAddress: string, on: TransportEvents): Promise<Transport> {
  const socket: Socket = connect({ port, host: '127.0.0.1', localAddress });
  socket.on('error', () => undefined);
  socket.on('data', (chunk: Buffer) => on.data(chunk));
  socket.on('close', () => on.close());
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('error', reject);
  });
  return {
    async write(data) {
      if (socket.destroyed) return false;
      if (!socket.write(data))
        await new Promise((resolve) => (socket.once('drain', resolve), socket.once('close', resolve)));
      return !socket.destroyed;
    },
    destroy: () => socket.destroy(),
  };
}

export async function rawRequest(port: number, req: RawRequest, closeWaitMs = 1000): Promise<RawResponse> {
  let received = Buffer.alloc(0);
  let closed = false;
  let answer: Omit<RawResponse, 'closed' | 'sentBytes' | 'elapsedMs'> | undefined;
  let notify: () => void = () => undefined;
  const events: TransportEvents = {
    data(chunk) {
      received = Buffer.concat([received, chunk]);
      answer ??= parseResponse(received);
      notify();
    },
    close() {
      closed = true;
      notify();
    },
  };
  const nextEvent = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, Math.max(0, ms));
      notify = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  const transport = req.localAddress
    ? await nodeTransport(port, req.localAddress, events)
    : await bunTransport(port, events);

  const body = req.body;
  const total = body?.data?.byteLength ?? body?.total ?? 0;
  const headers: Record<string, string> = { host: `127.0.0.1:${port}`, ...req.headers };
  if (body) {
    if (body.chunked) headers['transfer-encoding'] = 'chunked';
    else headers['content-length'] = String(body.declaredLength ?? total);
  }
  const head = `${req.method} ${req.path} HTTP/1.1${CRLF}${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}${CRLF}`)
    .join('')}${CRLF}`;
  const started = performance.now();
  await transport.write(Buffer.from(head, 'latin1'));

  let sent = 0;
  if (body) {
    const chunkSize = body.chunkSize ?? 256 * 1024;
    const filler = Buffer.alloc(chunkSize, body.fill ?? 0x61);
    const limit = Math.min(total, body.stallAfter ?? Number.POSITIVE_INFINITY);
    // Stop sending as soon as the answer (or the end of the connection) arrives.
    while (sent < limit && !answer && !closed) {
      const n = Math.min(chunkSize, limit - sent);
      const piece = body.data ? body.data.subarray(sent, sent + n) : n === chunkSize ? filler : filler.subarray(0, n);
      const framed = body.chunked
        ? Buffer.concat([Buffer.from(`${n.toString(16)}${CRLF}`), piece, Buffer.from(CRLF)])
        : piece;
      if (!(await transport.write(framed))) break;
      sent += n;
      if (body.delayMs) await nextEvent(body.delayMs);
      else await new Promise((r) => setImmediate(r));
    }
    if (body.chunked && sent >= total && !answer && !closed) await transport.write(Buffer.from(`0${CRLF}${CRLF}`));
  }

  const timeoutMs = req.timeoutMs ?? 30_000;
  const deadline = started + timeoutMs;
  while (!answer && !closed && performance.now() < deadline) await nextEvent(deadline - performance.now());
  // A connection closed right after the answer may still be delivering it.
  if (!answer && closed) await nextEvent(50);
  const elapsedMs = performance.now() - started;
  if (!answer) {
    transport.destroy();
    throw new Error(
      `no answer within ${timeoutMs} ms (closed: ${closed}, got ${received.byteLength} bytes: ${JSON.stringify(received.toString('latin1').slice(0, 200))})`,
    );
  }
  // Only an answer that says so closes the connection; waiting for any other would be idle time.
  const closeBy = performance.now() + (answer.headers.connection === 'close' ? closeWaitMs : 0);
  while (!closed && performance.now() < closeBy) await nextEvent(closeBy - performance.now());
  transport.destroy();
  return { ...answer, closed, sentBytes: sent, elapsedMs };
}

/** A complete response (with a Content-Length body) from the bytes so far; interim 1xx skipped. */
function parseResponse(bytes: Buffer): Omit<RawResponse, 'closed' | 'sentBytes' | 'elapsedMs'> | undefined {
  let offset = 0;
  for (;;) {
    const end = bytes.indexOf('\r\n\r\n', offset);
    if (end === -1) return undefined;
    const [statusLine, ...lines] = bytes.toString('latin1', offset, end).split(CRLF);
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1]);
    if (status >= 100 && status < 200) {
      offset = end + 4;
      continue;
    }
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    if (bytes.byteLength < end + 4 + length) return undefined;
    const text = bytes.toString('utf8', end + 4, end + 4 + length);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status, headers, text, json };
  }
}

/** Resident set size of a process, in bytes (Linux). */
export async function rssBytes(pid: number): Promise<number> {
  const status = await Bun.file(`/proc/${pid}/status`).text();
  const kb = Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1]);
  return kb * 1024;
}

/** Runs `work` while sampling the process's RSS every 10 ms; returns its result and the peak growth. */
export async function peakRssGrowth<T>(
  pid: number,
  work: () => Promise<T>,
): Promise<{ result: T; growthBytes: number }> {
  const baseline = await rssBytes(pid);
  let peak = baseline;
  let running = true;
  const sampler = (async () => {
    while (running) {
      peak = Math.max(peak, await rssBytes(pid));
      await Bun.sleep(10);
    }
  })();
  let result: T;
  try {
    result = await work();
    await Bun.sleep(200);
  } finally {
    running = false;
    await sampler;
  }
  peak = Math.max(peak, await rssBytes(pid));
  return { result, growthBytes: peak - baseline };
}

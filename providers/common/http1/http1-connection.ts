import { isIP } from 'node:net';
import type { Socket } from 'bun';
import type { RequestData } from './request-bytes.ts';

/** Where a connection goes: one pool of idle connections per origin. */
export interface Origin {
  /** `https://host:port`, the pool's key. */
  key: string;
  tls: boolean;
  hostname: string;
  port: number;
}

/** What the exchange in progress is told of its connection. */
export interface ConnectionSink {
  data(chunk: Buffer): void;
  closed(error?: Error): void;
}

/** A kept-alive connection found closed as a request was written on it: nothing reached the server. */
export class StaleConnection extends Error {}

/**
 * No answer's head within the time the caller allowed, connecting included: the connection is
 * closed. A timer of the client's own rather than an abort signal joined to the caller's
 * (`AbortSignal.any`), which costs about 1.4 µs more per call (docs/upstream-http.md).
 */
export class HeadTimeout extends Error {}

/** How long an idle connection is kept when the server does not say (`Keep-Alive: timeout=`). */
export const DEFAULT_KEEP_ALIVE_MS = 15_000;

/**
 * One HTTP/1.1 connection to an upstream, its bytes delivered on the JavaScript thread (where
 * `fetch` hands each read over from a thread of its own: the saving this client exists for).
 * It carries one exchange at a time; between them it waits in its origin's pool.
 */
export class Http1Connection {
  private socket: Socket<undefined> | undefined;
  private unwritten: Buffer | undefined;
  /** The exchange reading this connection; undefined while it is idle. */
  sink: ConnectionSink | undefined;
  closed = false;
  private closeError: Error | undefined;
  keepAliveMs = DEFAULT_KEEP_ALIVE_MS;
  idleTimer: ReturnType<typeof setTimeout> | undefined;
  /** Set by the pool: where a connection goes when its exchange ends cleanly. */
  onIdle: ((connection: Http1Connection) => void) | undefined;
  onClose: ((connection: Http1Connection) => void) | undefined;

  private constructor(readonly origin: Origin) {}

  /** Opens a connection (TCP, then TLS with the host's certificate verified) that is ready for a request. */
  static connect(origin: Origin, signal?: AbortSignal, timeoutMs?: number): Promise<Http1Connection> {
    const connection = new Http1Connection(origin);
    return new Promise((resolve, reject) => {
      let settled = false;
      const onAbort = () => {
        fail(signal?.reason);
        connection.destroy();
      };
      const timer =
        timeoutMs === undefined
          ? undefined
          : setTimeout(() => {
              fail(new HeadTimeout(`no connection to ${origin.key} within ${timeoutMs} ms`));
              connection.destroy();
            }, timeoutMs);
      const fail = (error: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        reject(error);
      };
      const ready = (socket: Socket<undefined>) => {
        if (settled) return socket.terminate();
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        socket.setNoDelay(true);
        resolve(connection);
      };
      if (signal?.aborted) return reject(signal.reason);
      signal?.addEventListener('abort', onAbort, { once: true });
      Bun.connect({
        hostname: origin.hostname,
        port: origin.port,
        tls: origin.tls ? (isIP(origin.hostname) ? true : { serverName: origin.hostname }) : undefined,
        socket: {
          open(socket) {
            connection.socket = socket;
            if (connection.closed) socket.terminate();
            else if (!origin.tls) ready(socket);
          },
          handshake(socket, success, authorizationError) {
            if (success && !authorizationError) return ready(socket);
            fail(
              new Error(`TLS with ${origin.hostname} failed: ${authorizationError?.message ?? 'handshake refused'}`),
            );
            socket.terminate();
          },
          data(_socket, chunk) {
            if (connection.sink) connection.sink.data(chunk);
            // Bytes nobody asked for (an idle connection): the framing can no longer be trusted.
            else connection.destroy();
          },
          drain() {
            connection.flush();
          },
          error(_socket, error) {
            connection.closeError = error;
          },
          close(_socket, error) {
            fail(error ?? connection.closeError ?? new Error(`connection to ${origin.key} closed before it was ready`));
            connection.closedBySocket(error);
          },
          connectError(_socket, error) {
            fail(error);
          },
        },
      }).catch(fail);
    });
  }

  /** Writes a request; false when the socket had closed already (nothing was sent). */
  write(data: RequestData): boolean {
    if (this.closed || !this.socket) return false;
    const written = this.socket.write(data);
    if (written < 0) return false;
    // A string is written as its UTF-8; what the socket did not take waits as bytes.
    const length = typeof data === 'string' ? Buffer.byteLength(data, 'utf8') : data.byteLength;
    if (written < length)
      this.unwritten = (typeof data === 'string' ? Buffer.from(data, 'utf8') : data).subarray(written);
    return true;
  }

  /** Part of the request is still to be written (the server answered before reading it all). */
  get writing(): boolean {
    return this.unwritten !== undefined;
  }

  private flush() {
    if (!this.unwritten || !this.socket) return;
    const written = this.socket.write(this.unwritten);
    this.unwritten = written >= 0 && written < this.unwritten.byteLength ? this.unwritten.subarray(written) : undefined;
  }

  pause() {
    this.socket?.pause();
  }

  resume() {
    this.socket?.resume();
  }

  /** Back to the pool (the exchange ended cleanly and the server allows another). */
  idle() {
    this.sink = undefined;
    if (this.closed) return;
    this.socket?.unref();
    this.onIdle ? this.onIdle(this) : this.destroy();
  }

  /** Taken from the pool for an exchange. */
  take() {
    this.socket?.ref();
  }

  destroy() {
    if (this.closed) return;
    this.socket?.terminate();
    this.closedBySocket();
  }

  private closedBySocket(error?: Error) {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.idleTimer);
    const sink = this.sink;
    this.sink = undefined;
    sink?.closed(error ?? this.closeError);
    this.onClose?.(this);
  }
}

import { bodyFraming, type BodyFraming } from './body-framing.ts';
import { DEFAULT_KEEP_ALIVE_MS, HeadTimeout, StaleConnection, type Http1Connection } from './http1-connection.ts';
import { decodedBody } from './content-coding.ts';
import { HttpProtocolError, MAX_HEAD_BYTES, parseResponseHead, type ResponseHead } from './response-head.ts';
import type { RequestData } from './request-bytes.ts';

/** Chunks a body holds unread before its connection stops reading (the upstream then waits). */
const BODY_HIGH_WATER = 16;

/**
 * How long the connection may idle after this answer: the server's `Keep-Alive: timeout=N` less a
 * second, so the gateway lets go before the server does (at least 1 s, at most the default).
 */
function keepAliveMs(head: ResponseHead): number {
  const seconds = /timeout\s*=\s*(\d+)/i.exec(head.headers.get('keep-alive') ?? '')?.[1];
  if (seconds === undefined) return DEFAULT_KEEP_ALIVE_MS;
  return Math.max(1_000, Math.min(Number(seconds) * 1_000 - 1_000, DEFAULT_KEEP_ALIVE_MS));
}

/**
 * One request and its answer on `connection`: resolves at the answer's head with a `Response`
 * whose body streams the rest as it arrives (paused past `BODY_HIGH_WATER` unread chunks). The
 * connection goes back to its pool when the body has ended cleanly and the server allows it, and
 * is closed otherwise: on a fault, a cancel, or `signal`'s abort (before or after the head).
 * No head within `headTimeoutMs` is a `HeadTimeout`. A redirect is refused, as `fetch` with
 * `redirect: 'error'` refuses it.
 */
export function exchange(
  connection: Http1Connection,
  bytes: RequestData,
  method: string,
  signal?: AbortSignal,
  headTimeoutMs?: number,
): Promise<Response> {
  return new Promise<Response>((resolve, reject) => {
    let headBytes: Buffer | undefined;
    let headTimer: ReturnType<typeof setTimeout> | undefined;
    let framing: BodyFraming | undefined;
    let reusable = false;
    let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
    let paused = false;
    let ended = false;

    const onAbort = () => fail(signal?.reason ?? new DOMException('The operation was aborted.', 'AbortError'));
    const end = () => {
      ended = true;
      clearTimeout(headTimer);
      signal?.removeEventListener('abort', onAbort);
      connection.sink = undefined;
    };
    function fail(error: unknown) {
      if (ended) return;
      end();
      connection.destroy();
      if (!controller) return reject(error);
      try {
        controller.error(error);
      } catch {
        // the consumer cancelled the body already
      }
    }
    function finish(extra?: Buffer) {
      if (ended) return;
      end();
      controller?.close();
      // The whole body is read: a connection paused for a slow reader reads again, idle or not.
      if (paused) connection.resume();
      // An answer that came before the whole request was written (a 413 to a large body) leaves
      // the rest of that body between it and the next request: such a connection is not reused.
      if (!reusable || connection.writing || (extra && extra.byteLength > 0)) connection.destroy();
      else connection.idle();
    }
    function enqueue(chunk: Buffer) {
      if (chunk.byteLength === 0 || !controller) return;
      controller.enqueue(chunk);
      if (!paused && (controller.desiredSize ?? 1) <= 0) {
        paused = true;
        connection.pause();
      }
    }
    function body(chunk: Buffer) {
      const f = framing as BodyFraming;
      switch (f.kind) {
        case 'length': {
          const take = Math.min(f.remaining, chunk.byteLength);
          enqueue(chunk.subarray(0, take));
          f.remaining -= take;
          if (f.remaining === 0) finish(chunk.subarray(take));
          return;
        }
        case 'chunked': {
          // One read, one chunk for the reader, however many chunks the server cut it into: a
          // fast upstream's whole stream often arrives in one read, and each chunk handed on
          // costs the reader a promise and its parser a feed.
          const data = f.decoder.push(chunk);
          if (data) enqueue(data);
          if (f.decoder.done) finish(f.decoder.rest);
          return;
        }
        case 'close':
          return enqueue(chunk);
        case 'none':
          return finish(chunk);
        default:
          return f satisfies never;
      }
    }
    function head(chunk: Buffer) {
      headBytes = headBytes ? Buffer.concat([headBytes, chunk]) : chunk;
      const blank = headBytes.indexOf('\r\n\r\n', 0, 'latin1');
      if (blank < 0) {
        if (headBytes.byteLength > MAX_HEAD_BYTES)
          throw new HttpProtocolError(`response head past ${MAX_HEAD_BYTES} bytes`);
        return;
      }
      const parsed = parseResponseHead(headBytes.toString('latin1', 0, blank));
      const rest = headBytes.subarray(blank + 4);
      headBytes = undefined;
      if (parsed.status < 200) {
        // 100 Continue, 103 Early Hints: informational, the real answer follows.
        if (parsed.status === 101) throw new HttpProtocolError('upstream switched protocols unasked');
        if (rest.byteLength) head(rest);
        return;
      }
      if (parsed.status > 599) throw new HttpProtocolError(`status ${parsed.status} is not an HTTP status`);
      if (parsed.status >= 300 && parsed.status < 400 && parsed.headers.has('location'))
        throw new TypeError(
          `upstream redirected (${parsed.status}) to ${parsed.headers.get('location')}; redirects are not followed`,
        );
      clearTimeout(headTimer);
      ({ framing, reusable } = bodyFraming(parsed, method));
      connection.keepAliveMs = keepAliveMs(parsed);
      if (
        framing.kind === 'length' &&
        rest.byteLength >= framing.remaining &&
        !parsed.headers.has('content-encoding')
      ) {
        // The whole body came with its head (a JSON answer, usually): answered from these bytes,
        // with no stream between them and the reader (a stream, its queue and its reads cost
        // 0.4-0.7 KB of heap more per call; bench/README.md). The socket's chunk is the reader's
        // alone: Bun hands each read a buffer of its own.
        const whole = rest.subarray(0, framing.remaining) as Uint8Array<ArrayBuffer>;
        resolve(new Response(whole, { status: parsed.status, statusText: parsed.statusText, headers: parsed.headers }));
        return finish(rest.subarray(framing.remaining));
      }
      const raw =
        framing.kind === 'none'
          ? null
          : new ReadableStream<Uint8Array>(
              {
                start: (c) => {
                  controller = c;
                },
                pull: () => {
                  if (!paused) return;
                  paused = false;
                  connection.resume();
                },
                cancel: (reason) => fail(reason),
              },
              new CountQueuingStrategy({ highWaterMark: BODY_HIGH_WATER }),
            );
      const { headers, stream } = decodedBody(parsed.headers, raw);
      resolve(new Response(stream, { status: parsed.status, statusText: parsed.statusText, headers }));
      body(rest);
    }

    connection.sink = {
      data(chunk) {
        try {
          framing ? body(chunk) : head(chunk);
        } catch (error) {
          fail(error);
        }
      },
      closed(error) {
        if (framing?.kind === 'close' && !error) return finish();
        fail(
          error ??
            new TypeError(
              controller
                ? `${connection.origin.key} closed the connection before the body ended`
                : `${connection.origin.key} closed the connection without answering`,
            ),
        );
      },
    };
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    if (headTimeoutMs !== undefined)
      headTimer = setTimeout(
        () => fail(new HeadTimeout(`${connection.origin.key} sent no answer within ${headTimeoutMs} ms`)),
        headTimeoutMs,
      );
    if (!connection.write(bytes))
      fail(new StaleConnection(`${connection.origin.key} had closed the kept-alive connection`));
  });
}

import type { Resolver } from '../net/address-guard.ts';
import { EnvelopeError, unprocessable } from '../http/errors.ts';
import { safeFetch, type SafeFetchOptions } from '../net/safe-fetch.ts';

export interface UrlSourceOptions {
  allowPrivate: boolean;
  /** The per-file maximum: a larger Content-Length is refused at once, a longer body cut off (413). */
  maxBytes: number;
  timeoutMs: number;
  /** The client's request: when it goes away, so does the download. */
  signal?: AbortSignal;
  /** Injectable for tests (addresses and transport); the defaults are the system's. */
  resolve?: Resolver;
  fetch?: SafeFetchOptions['fetch'];
}

/**
 * The body of `file_url` as a stream, fetched with the SSRF rules of every user-given URL: each
 * hop (redirects included) must resolve to public addresses only and is pinned to the address
 * checked (422 otherwise), and the body is limited in size and time.
 */
export async function openUrlSource(url: string, opts: UrlSourceOptions): Promise<ReadableStream<Uint8Array>> {
  let res: Response;
  try {
    res = await fetchSource(url, opts);
  } catch (err) {
    throw sourceFailure(err);
  }
  if (!res.ok) {
    await res.body?.cancel().catch(() => undefined);
    throw unprocessable(
      `file_url: the server answered ${res.status}${res.statusText ? ` ${res.statusText}` : ''}, not the file`,
    );
  }
  if (!res.body) throw unprocessable('file_url: the server answered without a body');
  return sourceErrorsAs422(res.body);
}

function fetchSource(url: string, opts: UrlSourceOptions): Promise<Response> {
  return safeFetch(
    url,
    { signal: opts.signal, headers: { accept: '*/*' } },
    {
      allowPrivate: opts.allowPrivate,
      field: 'file_url',
      timeoutMs: opts.timeoutMs,
      maxBytes: opts.maxBytes,
      resolve: opts.resolve,
      fetch: opts.fetch,
    },
  );
}

/**
 * A failure of the source's server (refused connection, reset, a body cut short or whose
 * encoding does not decode) as the 422 it is, naming file_url; the gateway's own refusals
 * (a private address, too large, too slow) keep their status.
 */
function sourceFailure(err: unknown): Error {
  if (err instanceof EnvelopeError) return err;
  return unprocessable(`file_url: the download failed (${err instanceof Error ? err.message : String(err)})`);
}

/** The body, its read errors turned into `sourceFailure`s: storing it then fails as the client's 422, not a 500. */
function sourceErrorsAs422(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (done) controller.close();
          else controller.enqueue(value);
        } catch (err) {
          controller.error(sourceFailure(err));
        }
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
}

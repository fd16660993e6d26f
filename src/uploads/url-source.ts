import type { Resolver } from '../net/address-guard.ts';
import { unprocessable } from '../http/errors.ts';
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
  const res = await safeFetch(
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
  if (!res.ok) {
    await res.body?.cancel().catch(() => undefined);
    throw unprocessable(
      `file_url: the server answered ${res.status}${res.statusText ? ` ${res.statusText}` : ''}, not the file`,
    );
  }
  if (!res.body) throw unprocessable('file_url: the server answered without a body');
  return res.body;
}

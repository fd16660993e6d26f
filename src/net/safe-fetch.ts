import { isIPv4 } from 'node:net';
import { type CheckedUrl, checkUrl, type Resolver } from './address-guard.ts';
import { abortReason, limitBody, untilAborted } from './limited-body.ts';
import { FetchLimitError } from './net-errors.ts';

/**
 * `fetch` for user-given URLs. Every hop (the first URL and each redirect) passes `checkUrl`,
 * and the connection is pinned to the address that was checked: the request goes to the IP
 * itself, with the name in `Host` and, for https, in SNI and certificate verification
 * (`tls.serverName`). A DNS answer that changes between check and connect (DNS rebinding)
 * therefore cannot redirect us into the private network.
 */
export interface SafeFetchOptions {
  allowPrivate: boolean;
  /** Names the URL in error messages, e.g. `callback_url`. */
  field?: string;
  /** Total time for every hop and the whole body. */
  timeoutMs?: number;
  /** The body errors once more than this has arrived; a larger Content-Length is refused at once. */
  maxBytes?: number;
  maxRedirects?: number;
  /** false: a 3xx is handed back as it is, never followed (webhooks count it as a failed delivery). */
  followRedirects?: boolean;
  resolve?: Resolver;
  /** The fetch to send with (tests put a recorder here). */
  fetch?: (url: string, init: BunFetchRequestInit) => Promise<Response>;
}

export type SafeResponse = Response & { finalUrl: string };

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

export async function safeFetch(
  input: string | URL,
  init: BunFetchRequestInit = {},
  opts: SafeFetchOptions,
): Promise<SafeResponse> {
  const field = opts.field ?? 'url';
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const maxBytes = opts.maxBytes ?? Number.POSITIVE_INFINITY;
  const maxRedirects = opts.maxRedirects ?? 3;
  const deadline = new AbortController();
  const timer = setTimeout(
    () => deadline.abort(new FetchLimitError('timeout', `${field}: no complete answer within ${timeoutMs} ms`)),
    timeoutMs,
  );
  const signal = init.signal ? AbortSignal.any([init.signal, deadline.signal]) : deadline.signal;
  const done = () => clearTimeout(timer);

  let url: string | URL = input;
  let method = (init.method ?? 'GET').toUpperCase();
  let body = init.body;
  const headers = new Headers(init.headers);
  try {
    for (let hop = 0; ; hop++) {
      const checked = await untilAborted(
        checkUrl(url, { allowPrivate: opts.allowPrivate, field, resolve: opts.resolve }),
        signal,
      );
      const target = pinned(checked);
      if (target.host) headers.set('host', target.host);
      const res = await (opts.fetch ?? fetch)(target.url, {
        ...init,
        method,
        body,
        headers,
        redirect: 'manual',
        signal,
        ...(target.serverName ? { tls: { ...init.tls, serverName: target.serverName }, keepalive: false } : {}),
      });
      const location = res.headers.get('location');
      if (REDIRECTS.has(res.status) && location !== null && opts.followRedirects !== false) {
        await res.body?.cancel();
        if (hop >= maxRedirects)
          throw new FetchLimitError('redirects', `${field}: more than ${maxRedirects} redirects`);
        const next = new URL(location, checked.url);
        // Method rewriting as browsers do it. @see https://fetch.spec.whatwg.org/#http-redirect-fetch
        if (
          (res.status === 303 && method !== 'HEAD') ||
          ((res.status === 301 || res.status === 302) && method === 'POST')
        ) {
          method = 'GET';
          body = undefined;
          for (const name of ['content-type', 'content-length', 'content-encoding']) headers.delete(name);
        } else if (body instanceof ReadableStream) {
          throw new FetchLimitError('redirects', `${field}: ${res.status} redirect would resend a streamed body`);
        }
        if (next.origin !== checked.url.origin)
          for (const name of ['authorization', 'cookie', 'proxy-authorization']) headers.delete(name);
        headers.delete('host');
        url = next;
        continue;
      }
      const declared = Number(res.headers.get('content-length') ?? Number.NaN);
      if (declared > maxBytes) {
        await res.body?.cancel();
        throw new FetchLimitError('size', `${field}: body of ${declared} bytes is larger than ${maxBytes} bytes`);
      }
      return wrap(res, checked.url.href, { maxBytes, signal, field, onDone: done });
    }
  } catch (err) {
    done();
    throw abortReason(deadline.signal) ?? err;
  }
}

/** Where to connect: the checked address, with the name kept for Host and TLS. */
function pinned(checked: CheckedUrl): { url: string; host?: string; serverName?: string } {
  if (checked.literal || checked.addresses.length === 0) return { url: checked.url.href };
  const address = checked.addresses.find((a) => isIPv4(a)) ?? (checked.addresses[0] as string);
  const target = new URL(checked.url);
  target.hostname = address.includes(':') ? `[${address}]` : address;
  return {
    url: target.href,
    host: checked.url.host,
    serverName: checked.url.protocol === 'https:' ? checked.hostname : undefined,
  };
}

function wrap(res: Response, finalUrl: string, limits: Parameters<typeof limitBody>[1]): SafeResponse {
  let body: ReadableStream<Uint8Array> | null = null;
  if (res.body && !NULL_BODY.has(res.status)) body = limitBody(res.body, limits);
  else {
    void res.body?.cancel();
    limits.onDone();
  }
  const out = new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  return Object.assign(out, { finalUrl });
}

import { HeadTimeout } from './http1/http1-connection.ts';
import { http1Fetch } from './http1/http1-fetch.ts';

export { HeadTimeout };

/** `socket`: the gateway's own HTTP/1.1 client (the default); `fetch`: Bun's. */
export type UpstreamClient = 'socket' | 'fetch';

let client: UpstreamClient = 'socket';

/** Chooses the client every upstream call goes through (`UPSTREAM_HTTP_CLIENT`, set at start). */
export function useUpstreamClient(chosen: UpstreamClient) {
  client = chosen;
}

/**
 * The schemes a proxy is configured for, read once: the environment is set when the process
 * starts (as every other variable, src/config/env.ts), so an upstream call need not look again.
 */
let proxiedSchemes: { http: boolean; https: boolean } | undefined;

/** A proxy is configured for this scheme: Bun's `fetch` speaks to it (CONNECT for https). */
function proxied(url: string): boolean {
  const env = process.env;
  proxiedSchemes ??= {
    http: Boolean(env.HTTP_PROXY || env.http_proxy),
    https: Boolean(env.HTTPS_PROXY || env.https_proxy),
  };
  return url.startsWith('https:') ? proxiedSchemes.https : proxiedSchemes.http;
}

export interface TransportInit {
  method: string;
  headers: Record<string, string>;
  body?: string;
  /** The call's own end (its client gone): aborts the exchange, its body included. */
  signal: AbortSignal;
  /** Longest wait for the answer's head, connecting included: past it a `HeadTimeout`. */
  headTimeoutMs: number;
}

/**
 * One upstream HTTP exchange. The gateway's own client reads each answer on the JavaScript
 * thread, saving the hand-over `fetch` makes from its HTTP thread on every read (see
 * docs/upstream-http.md); Bun's `fetch` serves when chosen and whenever a proxy is set.
 * Either way redirects are refused: an upstream's answer is the answer.
 */
export function upstreamTransport(url: string, init: TransportInit): Promise<Response> {
  if (client === 'fetch' || proxied(url)) return viaFetch(url, init);
  return http1Fetch(url, init);
}

/** Bun's `fetch`, its head timeout an abort signal joined to the call's (what `fetch` takes). */
async function viaFetch(url: string, { headTimeoutMs, signal, ...init }: TransportInit): Promise<Response> {
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), headTimeoutMs);
  try {
    return await fetch(url, { ...init, signal: AbortSignal.any([signal, timeout.signal]), redirect: 'error' });
  } catch (err) {
    if (timeout.signal.aborted && !signal.aborted)
      throw new HeadTimeout(`${new URL(url).origin} sent no answer within ${headTimeoutMs} ms`);
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

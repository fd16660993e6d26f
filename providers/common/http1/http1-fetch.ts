import { StaleConnection, type Origin } from './http1-connection.ts';
import { exchange } from './http1-exchange.ts';
import { acquire } from './http1-pool.ts';
import { requestBytes } from './request-bytes.ts';

export interface Http1Init {
  method: string;
  headers: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
  /** Longest wait for the answer's head, connecting included: past it a `HeadTimeout`. */
  headTimeoutMs?: number;
}

const origins = new Map<string, Origin>();

function originOf(url: URL): Origin {
  const key = `${url.protocol}//${url.host}`;
  let origin = origins.get(key);
  if (!origin) {
    const tls = url.protocol === 'https:';
    if (!tls && url.protocol !== 'http:') throw new TypeError(`${url.protocol} is not an HTTP URL`);
    origin = {
      key,
      tls,
      hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: url.port ? Number(url.port) : tls ? 443 : 80,
    };
    origins.set(key, origin);
  }
  return origin;
}

/**
 * An HTTP/1.1 request on a pooled connection of the gateway's own, answering a `Response` as
 * `fetch` does (redirects refused, content codings undone). A kept-alive connection found closed
 * as the request is written, so that nothing reached the server, is replaced once by a new one;
 * one that closes after the request went out is an error, the caller's retry policy decides.
 */
export async function http1Fetch(url: string, init: Http1Init): Promise<Response> {
  const parsed = new URL(url);
  const origin = originOf(parsed);
  const bytes = requestBytes({ method: init.method, url: parsed, headers: init.headers, body: init.body });
  const deadline = init.headTimeoutMs === undefined ? undefined : performance.now() + init.headTimeoutMs;
  const left = () => (deadline === undefined ? undefined : Math.max(0, deadline - performance.now()));
  for (let attempt = 0; ; attempt++) {
    const connection = await acquire(origin, init.signal, left());
    try {
      return await exchange(connection, bytes, init.method, init.signal, left());
    } catch (error) {
      if (!(error instanceof StaleConnection) || attempt > 0) throw error;
    }
  }
}

/**
 * Cross-origin calls to the API, as OpenAI's and Anthropic's own APIs answer them: the official
 * SDKs have a browser mode (`dangerouslyAllowBrowser`, `anthropic-dangerous-direct-browser-access`)
 * and a web page may call the gateway with a key its user holds. Any origin may, because the API
 * authenticates with a key the caller sends, never with an ambient credential: `*` does not let
 * a browser send the dashboard's session cookie with a cross-origin read, and the dashboard and
 * admin routes get no CORS headers at all.
 * @see https://fetch.spec.whatwg.org/#http-cors-protocol
 */
import { requestPath } from './request-path.ts';

/** The paths a browser may call from another origin. */
const isApiPath = (path: string) => path.startsWith('/v1/') || path === '/upload' || path.startsWith('/files/');

/** The gateway's own answer headers a page's script may read (the CORS-safelisted ones it always can). */
const EXPOSED = [
  'x-request-id',
  'x-gateway-model',
  'x-gateway-provider',
  'x-gateway-attempts',
  'x-gateway-cost-usd',
  'x-gateway-warnings',
  'x-gateway-cache',
  'server-timing',
  'retry-after',
  'idempotent-replayed',
].join(', ');

/** Header names as a preflight may list them: tokens separated by commas and spaces, bounded. */
const HEADER_LIST = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+(?:\s*,\s*[!#$%&'*+.^_`|~0-9A-Za-z-]+)*$/;

/**
 * The answer to a CORS preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`) on
 * an API path: 204 allowing any origin, the usual methods and the headers the page asked for.
 * Undefined for anything else, which goes on to the routes.
 */
export function corsPreflight(request: Request): Response | undefined {
  if (request.method !== 'OPTIONS') return undefined;
  const headers = request.headers;
  if (!headers.has('origin') || !headers.has('access-control-request-method')) return undefined;
  if (!isApiPath(requestPath(request.url))) return undefined;
  const asked = headers.get('access-control-request-headers')?.trim() ?? '';
  return new Response(null, {
    status: 204,
    headers: {
      'access-control-allow-origin': '*',
      'access-control-allow-methods': 'GET, POST, PUT, PATCH, DELETE',
      ...(asked && asked.length <= 2048 && HEADER_LIST.test(asked) ? { 'access-control-allow-headers': asked } : {}),
      'access-control-max-age': '86400',
    },
  });
}

/**
 * `response` readable by the calling page when the request came from a browser (`Origin`) to an
 * API path; any other response as it is. Headers of a fetched response are immutable: copied then.
 */
export function withCors(request: Request, response: Response): Response {
  if (!request.headers.has('origin') || !isApiPath(requestPath(request.url))) return response;
  if (response.headers.has('access-control-allow-origin')) return response;
  try {
    response.headers.set('access-control-allow-origin', '*');
    response.headers.set('access-control-expose-headers', EXPOSED);
    return response;
  } catch {
    const headers = new Headers(response.headers);
    headers.set('access-control-allow-origin', '*');
    headers.set('access-control-expose-headers', EXPOSED);
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
  }
}

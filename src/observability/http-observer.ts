import { type ObservedAttempt, withUpstreamScope } from '../../providers/common/upstream-observer.ts';
import { eventLoopLag, httpRequestDuration, httpRequests } from './metrics.ts';
import { requestIdFor } from './request-id.ts';
import { routeOf } from './route-template.ts';
import { endAttemptSpan, type Span, tracing } from './tracing.ts';

/** What the gateway knows about a request in flight, for the hooks of the LLM call it serves. */
export interface RequestObservation {
  requestId: string;
  /** `performance.now()` at arrival. */
  startedAt: number;
  /** The server span, when tracing is on. */
  span?: Span;
  /** Set when a stream answers the request: its span ends with the stream, not with the headers. */
  spanEndsWithStream?: boolean;
}

const observations = new WeakMap<Request, RequestObservation>();

/** Methods as labels: anything else is `_OTHER`, so a client cannot make new series. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
const methodLabel = (method: string) => (METHODS.has(method) ? method : '_OTHER');

/** Called by serve.ts when a request arrives. */
export function beginRequest(request: Request): RequestObservation {
  eventLoopLag.busy();
  const obs: RequestObservation = {
    requestId: requestIdFor(request.headers.get('x-request-id')),
    startedAt: performance.now(),
  };
  const t = tracing();
  if (t)
    obs.span = t.serverSpan(request.method, request.headers, {
      'http.request.method': request.method,
      'url.path': new URL(request.url).pathname,
      'gateway.request_id': obs.requestId,
    });
  observations.set(request, obs);
  return obs;
}

export function observationOf(request: Request): RequestObservation | undefined {
  return observations.get(request);
}

/** The request's `x-request-id`, for what it creates (task records). */
export function requestIdOf(request: Request): string | undefined {
  return observations.get(request)?.requestId;
}

/**
 * Runs the request's handling so that any upstream call it makes (a provider resource, a voice
 * list) carries the request id and, when tracing, its own client span; an LLM call sets a scope
 * of its own inside this one.
 */
export function inRequestScope<T>(obs: RequestObservation, handle: () => T): T {
  return withUpstreamScope({ attempt: (method, url) => requestAttempt(obs, method, url) }, handle);
}

function requestAttempt(obs: RequestObservation, method: string, url: string): ObservedAttempt {
  const headers: Record<string, string> = { 'x-request-id': obs.requestId };
  const t = tracing();
  const span = t?.childSpan(method, 'client', obs.span, {
    'http.request.method': method,
    'server.address': URL.parse(url)?.hostname ?? '',
  });
  if (span && t) Object.assign(headers, t.propagation(span));
  return {
    headers,
    end(result) {
      if (span && t) endAttemptSpan(t, span, result);
    },
  };
}

/** Adds `x-request-id` to the response (copying headers a fetched response keeps immutable). */
export function withRequestId(response: Response, obs: RequestObservation): Response {
  try {
    response.headers.set('x-request-id', obs.requestId);
    return response;
  } catch {
    const headers = new Headers(response.headers);
    headers.set('x-request-id', obs.requestId);
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
  }
}

/** Called by serve.ts once the response (or its headers, for a stream) is ready. */
export function endRequest(request: Request, obs: RequestObservation, status: number): void {
  const route = routeOf(request);
  const method = methodLabel(request.method);
  const seconds = (performance.now() - obs.startedAt) / 1000;
  httpRequests.inc({ method, route, status });
  httpRequestDuration.observe({ method, route }, seconds);
  const span = obs.span;
  if (!span) return;
  span.updateName(`${request.method} ${route}`);
  span.setAttribute('http.route', route);
  span.setAttribute('http.response.status_code', status);
  if (status >= 500) tracing()?.fail(span, String(status));
  if (!obs.spanEndsWithStream) span.end();
}

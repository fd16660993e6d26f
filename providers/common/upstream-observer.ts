import { AsyncLocalStorage } from 'node:async_hooks';

/** One upstream attempt as the gateway's observer sees it: headers to add, then how it ended. */
export interface ObservedAttempt {
  /** Sent with the attempt: the caller's request id and, when tracing, the `traceparent`. */
  headers: Record<string, string>;
  /** The attempt got an HTTP answer (`status`) or none (`error`: timeout, unreachable…). */
  end(result: { status: number } | { error: string }): void;
}

/** What the gateway is doing when an adapter calls its upstream: an LLM call, a task step. */
export interface UpstreamScope {
  attempt(method: string, url: string): ObservedAttempt;
}

/**
 * The scope travels with the async work of a call rather than through every adapter's
 * signature: the gateway runs an adapter call inside `withUpstreamScope`, and the one retry loop
 * (upstream-request.ts) asks it for each attempt's headers. Providers never learn what is observed.
 */
const scopes = new AsyncLocalStorage<UpstreamScope>();

export function withUpstreamScope<T>(scope: UpstreamScope, run: () => T): T {
  return scopes.run(scope, run);
}

/** The attempt's observer, or undefined outside any scope (start-up checks, tests of adapters). */
export function observeAttempt(method: string, url: string): ObservedAttempt | undefined {
  return scopes.getStore()?.attempt(method, url);
}

/**
 * Where one LLM or embeddings call's time went before its answer, as the standard `Server-Timing` response
 * header, so a client can tell the gateway's overhead from its upstream's on every call, in its
 * own environment, without a metrics scrape. The three parts never overlap and add up to the
 * time from the request's arrival to its answer (a stream: to its headers):
 *
 * - `upstream`: waiting on the upstream (all attempts, retries and backoff; a stream's first event);
 * - `settle`: waiting for the call's charge to be durable (a JSON answer only; a stream settles at its end);
 * - `gateway`: the rest, the gateway's own work (authentication, decoding, the hold, encoding).
 *
 * @see https://www.w3.org/TR/server-timing/
 */
export interface CallTiming {
  /** From the request's arrival to the answer, in milliseconds. */
  totalMs: number;
  upstreamMs: number;
  settleMs?: number;
}

const SERVER_TIMING_HEADER = 'server-timing';

/** Milliseconds with microseconds, the precision `performance.now()` gives here. */
const ms = (value: number) => Math.max(0, value).toFixed(3);

/** The header for an answer, none when the call did not come through the server (serve.ts). */
export function serverTimingHeaders(t: CallTiming | undefined): Record<string, string> {
  return t ? { [SERVER_TIMING_HEADER]: serverTiming(t) } : {};
}

export function serverTiming(t: CallTiming): string {
  const settle = t.settleMs ?? 0;
  const own = t.totalMs - t.upstreamMs - settle;
  const parts = [`gateway;dur=${ms(own)}`, `upstream;dur=${ms(t.upstreamMs)}`];
  if (t.settleMs !== undefined) parts.push(`settle;dur=${ms(settle)}`);
  return parts.join(', ');
}

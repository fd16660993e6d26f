/**
 * What every fake LLM upstream of the tests shares (fake-llm-upstream.ts for Chat Completions and
 * Messages, fake-responses-upstream.ts for Responses): a loopback server that records each request
 * (so tests can assert what the gateway sent and when it went away), and the scripted SSE body
 * that plays a list of events with the failure scenarios — a pause then a cut connection, an
 * error event or garbage after `breakAfter` content events, or one content event per interval —
 * and `long-pause`, a pause of LONG_PAUSE_MS after `breakAfter` content events, then the rest.
 */
import type { Scenario } from './fake-llm-upstream.ts';

/** One request as a fake upstream saw it. */
export interface RecordedBase {
  seq: number;
  path: string;
  /** Lower-case header names. */
  headers: Record<string, string>;
  /** The parsed JSON body (undefined when it was not JSON). */
  body: any;
  rawBody: string;
  scenario: Scenario | undefined;
  /** 1-based count of requests with the same scenario and conversation so far (flaky-429). */
  attempt: number;
  status?: number;
  receivedAt: number;
  firstByteAt?: number;
  endedAt?: number;
  /** When the fake saw the caller go away before the answer was complete. */
  abortedAt?: number;
  /** The caller's TCP port: requests on one kept-alive connection share it. */
  remotePort?: number;
}

/** An SSE event to send; `content` ones count toward `breakAfter` and pace `slow-stream`. */
export interface Emit {
  text: string;
  content?: boolean;
}

export interface StreamScript {
  scenario: Scenario;
  /** After this many content events the scenario's failure happens (none when undefined). */
  breakAfter?: number;
  /** What `error-event` sends before closing. */
  errorEvent: string;
  /** What `garbage` sends before going on. */
  garbage: string;
  headers: Record<string, string>;
  slowIntervalMs: number;
}

/**
 * Pause before a failure, so the caller meets it mid-body, not as a failed request. Long enough that
 * a gateway whose event loop is busy (the embedded database runs on it) has read the deltas before
 * a reset: a reset discards bytes still unread in the socket buffer.
 */
const BREAK_DELAY_MS = 250;
/** `long-pause`: how long the stream is silent mid-way (a model that stops to think). */
export const LONG_PAUSE_MS = 6_500;
/** `late-end`: how long after its last event the body ends (its chunked terminator is written). */
export const LATE_END_MS = 40;
const enc = new TextEncoder();
const now = () => Date.now();

export function scriptedSse(rec: RecordedBase, req: Request, events: Emit[], script: StreamScript): Response {
  const { scenario } = script;
  let breakAfter = script.breakAfter;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let closed = false;
  const finish = () => {
    closed = true;
    if (timer) clearTimeout(timer);
    rec.endedAt ??= now();
  };
  // The caller went away before the answer was complete (request signal or stream cancel).
  const markAborted = () => {
    if (!closed) rec.abortedAt ??= now();
    finish();
  };
  req.signal.addEventListener('abort', markAborted, { once: true });
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const send = (text: string) => {
        if (closed) return;
        rec.firstByteAt ??= now();
        controller.enqueue(enc.encode(text));
      };
      let i = 0;
      let sent = 0;
      let paused = false;
      const step = () => {
        if (closed) return;
        for (; i < events.length; i++) {
          const e = events[i] as Emit;
          if (e.content && breakAfter !== undefined && sent === breakAfter) {
            if (!paused) {
              paused = true;
              timer = setTimeout(step, scenario === 'long-pause' ? LONG_PAUSE_MS : BREAK_DELAY_MS);
              return;
            }
            if (scenario === 'error-event') {
              send(script.errorEvent);
              finish();
              controller.close();
              return;
            }
            if (scenario === 'cut') {
              finish();
              controller.error(); // resets the connection (no argument: no noise in the log)
              return;
            }
            if (scenario === 'garbage') send(script.garbage);
            breakAfter = undefined;
          }
          send(e.text);
          if (e.content) sent++;
          if (scenario === 'slow-stream' && e.content) {
            i++;
            timer = setTimeout(step, script.slowIntervalMs);
            return;
          }
        }
        const close = () => {
          finish();
          controller.close();
        };
        if (scenario === 'late-end') timer = setTimeout(close, LATE_END_MS);
        else if (scenario !== 'stall-after-end') close();
      };
      step();
    },
    cancel: markAborted,
  });
  return new Response(body, {
    status: 200,
    headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', ...script.headers },
  });
}

export interface RecordingServer<R extends RecordedBase> {
  port: number;
  /** API root including `/v1`, as the gateway config's `base_url`. */
  baseUrl: string;
  requests: R[];
  /** Requests whose raw body contains `marker` (tests put a unique marker in a message). */
  find(marker: string): R[];
  /** Waits until `n` requests contain `marker`. */
  waitFor(marker: string, n?: number, timeoutMs?: number): Promise<R[]>;
  stop(): Promise<void>;
}

export interface RecordingOptions<R extends RecordedBase> {
  /** Which requests count as repeats of one another (for `attempt`). */
  conversationOf(body: any): unknown;
  /** The scenario the request's body asks for. */
  scenarioOf(body: unknown): Scenario | undefined;
  /** Adds the fake's own fields to the record. */
  record(base: RecordedBase, req: Request): R;
  handle(req: Request, rec: R): Promise<Response>;
}

/** Serves `handle` on loopback, recording every request before it is handled. */
export function startRecordingServer<R extends RecordedBase>(opts: RecordingOptions<R>): RecordingServer<R> {
  const requests: R[] = [];
  const attempts = new Map<string, number>();
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    idleTimeout: 120,
    async fetch(req, srv) {
      const rawBody = await req.text();
      let body: unknown;
      try {
        body = rawBody ? JSON.parse(rawBody) : undefined;
      } catch {
        body = undefined;
      }
      const scenario = opts.scenarioOf(body);
      const parsed = body as { stream?: unknown } | undefined;
      const key = `${scenario}:${JSON.stringify(opts.conversationOf(body) ?? null)}:${parsed?.stream === true}`;
      const attempt = (attempts.get(key) ?? 0) + 1;
      attempts.set(key, attempt);
      const base: RecordedBase = {
        seq: requests.length,
        path: new URL(req.url).pathname,
        headers: Object.fromEntries([...req.headers.entries()].map(([k, v]) => [k.toLowerCase(), v])),
        body,
        rawBody,
        scenario,
        attempt,
        receivedAt: now(),
        remotePort: srv.requestIP(req)?.port,
      };
      const rec = opts.record(base, req);
      requests.push(rec);
      const res = await opts.handle(req, rec);
      rec.status = res.status;
      if (!res.headers.get('content-type')?.startsWith('text/event-stream')) rec.endedAt ??= now();
      return res;
    },
  });
  const find = (marker: string) => requests.filter((r) => r.rawBody.includes(marker));
  return {
    port: server.port as number,
    baseUrl: `http://127.0.0.1:${server.port}/v1`,
    requests,
    find,
    async waitFor(marker, n = 1, timeoutMs = 5_000) {
      const deadline = now() + timeoutMs;
      while (find(marker).length < n && now() < deadline) await Bun.sleep(10);
      return find(marker);
    },
    async stop() {
      await server.stop(true);
    },
  };
}

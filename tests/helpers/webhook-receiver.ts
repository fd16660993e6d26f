import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Server } from 'bun';

/**
 * A real loopback webhook receiver for integration tests: `Bun.serve` on a free port that records
 * every request (arrival time, headers, raw body text) and answers as the test programs it, per
 * path and per call (the n-th request for the same path and `task_id`).
 */

/** What the receiver does with one request. */
export type Reply =
  | { kind: 'status'; status: number; body?: string; headers?: Record<string, string> }
  /** Answer only after `ms` (then `status`, 200 by default): longer than the sender's timeout means no answer. */
  | { kind: 'hang'; ms: number; status?: number }
  /** Drop the connection without any HTTP answer. */
  | { kind: 'close' };

export const reply = {
  ok: (): Reply => ({ kind: 'status', status: 200, body: 'ok' }),
  status: (status: number, body = 'receiver says no'): Reply => ({ kind: 'status', status, body }),
  redirect: (location: string, status = 302): Reply => ({ kind: 'status', status, body: '', headers: { location } }),
  hang: (ms: number, status = 200): Reply => ({ kind: 'hang', ms, status }),
  close: (): Reply => ({ kind: 'close' }),
};

export interface Received {
  /** Order of arrival over the whole receiver, from 0. */
  seq: number;
  /** Date.now() when the request arrived (its body fully read). */
  at: number;
  method: string;
  path: string;
  /** Lower-cased header names. */
  headers: Record<string, string>;
  /** The body exactly as received. */
  body: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: any;
  /** `task_id` of the JSON body, when there is one. */
  taskId?: string;
  /** 1-based count of requests with this path and task_id (including this one). */
  call: number;
  /** What the receiver answered. */
  answered: Reply;
}

/** Chooses the reply to the `call`-th request for one path and task_id. */
export type Plan = (call: number, req: Omit<Received, 'answered'>) => Reply;

export const plans = {
  ok: (): Plan => () => reply.ok(),
  always:
    (status: number): Plan =>
    () =>
      reply.status(status),
  /** The first `n` calls answer `status` (500 by default), the rest 200. */
  failFirst:
    (n: number, status = 500): Plan =>
    (call) =>
      call <= n ? reply.status(status) : reply.ok(),
  /** Replies in order; the last one repeats. */
  sequence:
    (...replies: Reply[]): Plan =>
    (call) =>
      replies[Math.min(call, replies.length) - 1] as Reply,
};

export interface ReceivedFilter {
  path?: string;
  taskId?: string;
}

export class WebhookReceiver {
  readonly requests: Received[] = [];
  private readonly plans = new Map<string, Plan>();
  private readonly calls = new Map<string, number>();
  private readonly waiters = new Set<() => void>();
  private readonly hangs = new Set<() => void>();

  private constructor(private readonly server: Server<undefined>) {}

  static start(): WebhookReceiver {
    let self: WebhookReceiver | undefined;
    const server = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      // Long enough for every `hang` a test programs (Bun's default would cut them at 10 s).
      idleTimeout: 120,
      fetch: (req) => (self as WebhookReceiver).handle(req),
    });
    self = new WebhookReceiver(server);
    return self;
  }

  get port(): number {
    return this.server.port ?? 0;
  }

  /** The URL of `path` on this receiver; with `plan`, requests to it are answered by that plan (default: 200). */
  url(path = '/', plan?: Plan): string {
    if (plan) this.plans.set(path, plan);
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** Requests so far, optionally only those of one path and/or task. */
  received(filter: ReceivedFilter = {}): Received[] {
    return this.requests.filter(
      (r) =>
        (filter.path === undefined || r.path === filter.path) &&
        (filter.taskId === undefined || r.taskId === filter.taskId),
    );
  }

  /** Resolves with the recorded requests once `predicate` holds; rejects after `timeoutMs`, listing what came. */
  async waitFor(predicate: (all: Received[]) => boolean, timeoutMs: number, what = 'condition'): Promise<Received[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (predicate(this.requests)) return this.requests;
      const left = deadline - Date.now();
      if (left <= 0) {
        const summary = this.requests
          .map(
            (r) =>
              `${r.seq} +${r.at - (this.requests[0]?.at ?? r.at)}ms ${r.path} ${r.taskId ?? '-'} #${r.call} → ${describe(r.answered)}`,
          )
          .join('\n');
        throw new Error(
          `webhook receiver: ${what} not met within ${timeoutMs} ms; received ${this.requests.length}:\n${summary}`,
        );
      }
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.waiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, Math.min(left, 250));
        this.waiters.add(wake);
      });
    }
  }

  /** Waits until at least `n` requests match `filter`; returns them. */
  async waitForCount(filter: ReceivedFilter, n: number, timeoutMs: number): Promise<Received[]> {
    await this.waitFor(
      () => this.received(filter).length >= n,
      timeoutMs,
      `${n} request(s) for ${JSON.stringify(filter)}`,
    );
    return this.received(filter);
  }

  stop(): void {
    for (const release of this.hangs) release();
    this.server.stop(true);
  }

  private async handle(req: Request): Promise<Response> {
    const body = await req.text();
    const at = Date.now();
    const url = new URL(req.url);
    let json: any;
    try {
      json = JSON.parse(body);
    } catch {
      json = undefined;
    }
    const taskId = typeof json?.task_id === 'string' ? (json.task_id as string) : undefined;
    const callKey = `${url.pathname}\n${taskId ?? ''}`;
    const call = (this.calls.get(callKey) ?? 0) + 1;
    this.calls.set(callKey, call);
    const headers: Record<string, string> = {};
    req.headers.forEach((value, name) => {
      headers[name.toLowerCase()] = value;
    });
    const base = {
      seq: this.requests.length,
      at,
      method: req.method,
      path: url.pathname,
      headers,
      body,
      json,
      taskId,
      call,
    };
    const answered = (this.plans.get(url.pathname) ?? plans.ok())(call, base);
    this.requests.push({ ...base, answered });
    for (const wake of [...this.waiters]) wake();

    switch (answered.kind) {
      case 'status':
        return new Response(answered.body ?? '', { status: answered.status, headers: answered.headers });
      case 'hang': {
        await new Promise<void>((resolve) => {
          const release = () => {
            clearTimeout(timer);
            this.hangs.delete(release);
            resolve();
          };
          const timer = setTimeout(release, answered.ms);
          this.hangs.add(release);
        });
        return new Response('late', { status: answered.status ?? 200 });
      }
      case 'close':
        // A body stream that errors before any byte is written makes Bun reset the connection:
        // the sender gets no status line at all. (Bun prints the error; that is expected.)
        return new Response(
          new ReadableStream({
            start(controller) {
              controller.error(new Error('webhook receiver: closing the connection on purpose'));
            },
          }),
        );
    }
  }
}

function describe(r: Reply): string {
  return r.kind === 'status' ? String(r.status) : r.kind;
}

/** The signature docs/webhooks.md describes: lowercase hex HMAC-SHA256(secret, `${timestamp}.${rawBody}`). */
export function expectedSignature(secret: string, timestamp: string, rawBody: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${rawBody}`).digest('hex');
}

/** Verifies a recorded request as a receiver should: over the raw body, compared in constant time. */
export function verifySignature(req: Pick<Received, 'headers' | 'body'>, secret: string): boolean {
  const timestamp = req.headers['x-webhook-timestamp'];
  const signature = req.headers['x-webhook-signature'];
  if (!timestamp || !signature || !/^[0-9a-f]{64}$/.test(signature)) return false;
  const expected = Buffer.from(expectedSignature(secret, timestamp, req.body), 'hex');
  const given = Buffer.from(signature, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The Standard Webhooks form of a 64-hex signing secret: `whsec_` + base64 of its 32 bytes. */
export const standardSecretOf = (secret: string) => `whsec_${Buffer.from(secret, 'hex').toString('base64')}`;
